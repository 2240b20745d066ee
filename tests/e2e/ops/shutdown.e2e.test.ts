/**
 * One SIGTERM/SIGINT to a real `muninn serve` (NODE_ENV=production, SQLite and managed Redis in its data
 * folder, as the README starts it) stops it cleanly: exit code 0, its managed redis-server gone, running
 * turns finished or handed back to the queue, subscriptions closed with 1001; after a restart every
 * acknowledged message is answered exactly once. Only a second signal exits at once.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { GraphQLTestClient } from '../../support/graphql-client';
import { childEnv, startServeProcess, type ServeProcess } from '../../support/serve-process';
import { pidAlive } from '../../support/pid-alive';
import { lastUserText } from '../pipeline/pipeline-helpers';
import { checkStored } from '../fault/sqlite-check';
import { callsOf, scriptModel, summarizerInput } from '../memory-lifecycle/summarizer-model';
import { dataOf } from '../../support/graphql-client';

const QUEUE_COUNTS = /* GraphQL */ `query Q { queues { name counts { active delayed } } }`;
const MEMORIES = /* GraphQL */ `query M { memories(first: 50) { edges { node { content } } } }`;

function managedRedisPid(dataDir: string): number | null {
  try {
    return Number(readFileSync(path.join(dataDir, 'redis', 'redis.pid'), 'utf8').trim());
  } catch {
    return null;
  }
}

interface Rig {
  dataDir: string;
  configFile: string;
  server: ServeProcess;
  owner: GraphQLTestClient;
  redisPid: number;
}

jest.setTimeout(150_000);

const ROOT = path.join(__dirname, '..', '..', '..');

const model = { server: null as FakeOpenAIServer | null };
const dirs: string[] = [];
const servers: ServeProcess[] = [];

/** The config of a server in `dir`: SQLite and a managed Redis there, the fake model. */
function writeConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const configFile = path.join(dir, 'muninn.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      data_dir: dir,
      server: { host: '127.0.0.1', port: 0 },
      database: { url: null },
      redis: { url: null },
      ai: { providers: { fake: { base_url: model.server!.baseUrl, model: 'fake-model', max_concurrency: 8 } } },
      session: { summarizer_mode: 'manual' },
      log: { level: 'info' },
      ...extra,
    }),
  );
  return configFile;
}

async function startRig(extra: Record<string, unknown> = {}, dataDir?: string): Promise<Rig> {
  const dir = dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'muninn-shutdown-'));
  if (!dataDir) dirs.push(dir);
  const configFile = writeConfig(dir, extra);
  const server = await startServeProcess('serve', 'all', configFile, 90_000, 'production');
  servers.push(server);
  await eventually(async () => (await fetch(`${server.url}/readyz`)).status === 200, 30_000, '/readyz');
  const token = readFileSync(path.join(dir, 'owner.token'), 'utf8').trim();
  const redisPid = managedRedisPid(dir)!;
  expect(pidAlive(redisPid)).toBe(true);
  return { dataDir: dir, configFile, server, owner: new GraphQLTestClient(server.url, token), redisPid };
}

async function waitExit(server: ServeProcess): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  const code = await server.exited;
  return { code, ms: Date.now() - started };
}

beforeAll(async () => {
  model.server = await FakeOpenAIServer.start();
});

afterAll(async () => {
  for (const s of servers) await s.kill('SIGKILL');
  for (const dir of dirs) {
    const pid = managedRedisPid(dir);
    if (pid && pidAlive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  await model.server?.close();
});

describe('shutdown on one signal (NODE_ENV=production)', () => {
  it('an idle server that has run for a while exits 0 on SIGTERM, with its managed Redis stopped', async () => {
    model.server!.setDefault((req) => ({ text: `Reply to ${lastUserText(req)}` }));
    const rig = await startRig();
    expect((await send(rig.owner, 'hello')).status).toBeDefined();
    await new Promise((r) => setTimeout(r, 4_000));
    // The data folder is private to the server's user, and so is every file in it.
    const mode = (p: string) => (statSync(path.join(rig.dataDir, p)).mode & 0o777).toString(8);
    expect({ dir: mode('.'), db: mode('muninn.sqlite'), wal: mode('muninn.sqlite-wal'), token: mode('owner.token'), redis: mode('redis') }).toEqual({
      dir: '700',
      db: '600',
      wal: '600',
      token: '600',
      redis: '700',
    });
    rig.server.child.kill('SIGTERM');
    const { code, ms } = await waitExit(rig.server);
    expect(code).toBe(0);
    // Bounded: no wait on turns or timers (loose, for busy machines).
    expect(ms).toBeLessThan(10_000);
    const logs = rig.server.logs.map((l) => String(l.msg));
    expect(logs).toContain('shutting down');
    expect(logs).not.toContain('second signal: exiting now');
    await eventually(() => !pidAlive(rig.redisPid), 5_000, 'managed redis-server stopped');
  });

  it('SIGINT under load: running turns finish, a subscription is closed with 1001, and after a restart every acknowledged message is answered once', async () => {
    model.server!.setDefault((req) => ({ text: `Reply to ${lastUserText(req)}`, delayMs: 150, chunks: 3, chunkDelayMs: 30 }));
    const rig = await startRig({ shutdown_timeout_ms: 20_000 });
    const users = await Promise.all([0, 1, 2, 3].map((i) => createUserWithToken(rig.owner, `load-${i}`, 'MEMBER')));
    const clients = users.map((u) => new GraphQLTestClient(rig.server.url, u.token));
    await new Promise((r) => setTimeout(r, 2_000));

    // A live subscription on the first user's session.
    const first = await send(clients[0]!, 'open the session');
    const closeCode = new Promise<number>((resolve) => {
      const ws = new WebSocket(rig.server.url.replace(/^http/, 'ws') + '/graphql', 'graphql-transport-ws');
      ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${users[0]!.token}` } })));
      ws.on('message', (raw) => {
        const msg = JSON.parse(String(raw)) as { type: string };
        if (msg.type === 'connection_ack') {
          ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: `subscription { sessionEvents(sessionId: "${first.sessionId}", afterSeq: 0) { __typename } }` } }));
        }
      });
      ws.on('close', (code) => resolve(code));
      ws.on('error', () => undefined);
    });

    const acknowledged: string[] = [];
    let stop = false;
    const load = clients.map(async (client, i) => {
      for (let n = 0; !stop; n++) {
        try {
          const turn = await send(client, `user ${i} message ${n}`);
          if (turn.messageId) acknowledged.push(turn.messageId);
        } catch {
          return; // the server stopped listening
        }
      }
    });
    await eventually(() => acknowledged.length >= 12, 30_000, 'load running');
    rig.server.child.kill('SIGINT');
    const { code } = await waitExit(rig.server);
    stop = true;
    await Promise.all(load);
    expect(code).toBe(0);
    expect(await closeCode).toBe(1001);
    await eventually(() => !pidAlive(rig.redisPid), 5_000, 'managed redis-server stopped');

    // Restart on the same folder: what was still queued is answered, nothing twice.
    const again = await startRig({ shutdown_timeout_ms: 20_000 }, rig.dataDir);
    const db = path.join(rig.dataDir, 'muninn.sqlite');
    const check = await eventually(
      () => {
        const c = checkStored(db, acknowledged);
        return c.unanswered === 0 && c.stuck === 0 ? c : undefined;
      },
      60_000,
      'every acknowledged message answered after the restart',
    );
    expect(check).toMatchObject({ lost: 0, unanswered: 0, duplicated: 0, stuck: 0, notDone: 0 });
    again.server.child.kill('SIGTERM');
    expect((await waitExit(again.server)).code).toBe(0);
  });

  it('a turn that outlasts shutdown_timeout_ms is handed back and answered after the restart; a second signal exits at once', async () => {
    model.server!.setDefault((req) => ({ text: `Slow reply to ${lastUserText(req)}`, delayMs: 8_000 }));
    const rig = await startRig({ shutdown_timeout_ms: 300 });
    const turn = await send(rig.owner, 'a slow question');
    await eventually(() => model.server!.requests.some((r) => JSON.stringify(r.body).includes('a slow question')), 20_000, 'model called');
    rig.server.child.kill('SIGTERM');
    const { code, ms } = await waitExit(rig.server);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
    await eventually(() => !pidAlive(rig.redisPid), 5_000, 'managed redis-server stopped');

    model.server!.setDefault((req) => ({ text: `Quick reply to ${lastUserText(req)}` }));
    const again = await startRig({ shutdown_timeout_ms: 30_000 }, rig.dataDir);
    const db = path.join(rig.dataDir, 'muninn.sqlite');
    await eventually(() => checkStored(db, [turn.messageId!]).unanswered === 0 || undefined, 30_000, 'handed-back turn answered');
    expect(checkStored(db, [turn.messageId!])).toMatchObject({ lost: 0, unanswered: 0, duplicated: 0, notDone: 0 });

    // A second signal while the first one drains a long turn: exit at once with 1.
    model.server!.setDefault((req) => ({ text: `Slow reply to ${lastUserText(req)}`, delayMs: 20_000 }));
    await send(again.owner, 'another slow question');
    await eventually(() => model.server!.requests.some((r) => JSON.stringify(r.body).includes('another slow question')), 20_000, 'model called');
    again.server.child.kill('SIGTERM');
    await eventually(() => again.server.logs.some((l) => l.msg === 'waiting for running turns to finish'), 5_000, 'draining');
    again.server.child.kill('SIGTERM');
    const second = await waitExit(again.server);
    expect(second.code).toBe(1);
    expect(second.ms).toBeLessThan(5_000);
    expect(again.server.logs.map((l) => String(l.msg))).toContain('second signal: exiting now');
    await eventually(() => !pidAlive(again.redisPid), 5_000, 'managed redis-server stopped with the process');
  });

  it('a summary waiting out the background grace is handed back: SIGTERM exits 0 without waiting for it, and the restarted server stores it', async () => {
    const bees = 'Ada keeps bees on the roof.';
    scriptModel(model.server!, { extract: (req) => (summarizerInput(req).includes('bees') ? JSON.stringify({ memories: [{ type: 'fact', content: bees, importance: 0.7 }] }) : '{"memories":[]}') });
    const providers = { fake: { base_url: model.server!.baseUrl, model: 'fake-model', max_concurrency: 8 } };
    // Background calls wait 10 minutes after an interactive one: the summary cannot run before the signal.
    const rig = await startRig({ shutdown_timeout_ms: 5_000, session: { summarizer_mode: 'auto', summarizer_batch: 1 }, ai: { providers, background_grace_ms: 600_000 } });
    await send(rig.owner, 'By the way, I keep bees on the roof');
    await eventually(
      async () => {
        const queues = dataOf(await rig.owner.http<{ queues: Array<{ name: string; counts: { active: number; delayed: number } }> }, unknown>(QUEUE_COUNTS, {})).queues;
        const count = (name: string) => queues.find((q) => q.name === name)?.counts;
        return count('summarizer')?.active === 1 && count('model-calls.fake')?.delayed === 1;
      },
      20_000,
      'the summary running, its model call waiting out the grace',
    );
    rig.server.child.kill('SIGTERM');
    const { code, ms } = await waitExit(rig.server);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(5_000); // not the grace, nor shutdown_timeout_ms and its deadline (loose, for busy machines)
    expect(callsOf(model.server!, 'extract')).toEqual([]);
    await eventually(() => !pidAlive(rig.redisPid), 5_000, 'managed redis-server stopped');

    const again = await startRig({ session: { summarizer_mode: 'auto', summarizer_batch: 1 }, ai: { providers, background_grace_ms: 50 } }, rig.dataDir);
    const stored = await eventually(
      async () => dataOf(await again.owner.http<{ memories: { edges: Array<{ node: { content: string } }> } }, unknown>(MEMORIES, {})).memories.edges.find((e) => e.node.content === bees),
      30_000,
      'the handed-back summary stored after the restart',
    );
    expect(stored.node.content).toBe(bees);
    again.server.child.kill('SIGTERM');
    expect((await waitExit(again.server)).code).toBe(0);
  });

  it('a SIGTERM during start-up lets start-up finish, then stops cleanly: exit 0, no Redis left', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-shutdown-'));
    dirs.push(dir);
    const configFile = writeConfig(dir);
    const child = spawn(process.execPath, ['-r', path.join(ROOT, 'tests/support/swc-register.js'), path.join(ROOT, 'tests/support/cli-process.ts'), 'serve'], {
      cwd: ROOT,
      env: childEnv(configFile, 'production'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const messages: string[] = [];
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let signalled = false;
    let buffer = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (buffer + chunk).split('\n');
      buffer = lines.pop()!;
      for (const line of lines.filter(Boolean)) {
        try {
          messages.push(String((JSON.parse(line) as { msg?: unknown }).msg));
        } catch {
          messages.push(line);
        }
      }
      // The managed Redis is up, the rest of start-up (migrations, workers, listening) is still to come.
      if (!signalled && messages.includes('started managed Redis')) {
        signalled = true;
        child.kill('SIGTERM');
      }
    });
    const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 60_000))]);
    if (code === 'hung') child.kill('SIGKILL');
    expect(signalled).toBe(true);
    expect(code).toBe(0);
    expect(messages).toContain('stopping once start-up is done');
    expect(messages).toContain('stopped managed Redis');
    expect(messages).not.toContain('second signal: exiting now');
    // A clean stop removes the pid file of the managed Redis.
    expect(existsSync(path.join(dir, 'redis', 'redis.pid'))).toBe(false);
    expect(messages.some((m) => m.startsWith('Muninn is listening on'))).toBe(true);
  });

  it('a shutdown that cannot finish (its Redis stopped answering) exits 1 after shutdown_timeout_ms and a grace, not never', async () => {
    const rig = await startRig({ shutdown_timeout_ms: 200 });
    // The Redis freezes: every close that needs it waits for ever.
    process.kill(rig.redisPid, 'SIGSTOP');
    try {
      rig.server.child.kill('SIGTERM');
      const { code } = await waitExit(rig.server);
      expect(code).toBe(1);
      const logs = rig.server.logs.map((l) => String(l.msg));
      expect(logs).toContain('shutting down');
      expect(logs).toContain('shutdown did not finish in time: exiting now');
    } finally {
      process.kill(rig.redisPid, 'SIGCONT');
    }
    // The exit hook's SIGTERM reaches the Redis once it runs again.
    await eventually(() => !pidAlive(rig.redisPid), 5_000, 'managed redis-server stopped with the process');
  });
});
