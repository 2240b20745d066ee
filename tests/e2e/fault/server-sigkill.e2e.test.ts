/**
 * Fault suite: the whole server (`muninn serve`, SQLite file and managed Redis in its data folder, as the
 * README starts it) is killed with SIGKILL again and again while clients write through `sendMessage`.
 * Each restart uses the same data folder. Afterwards the SQLite file passes `PRAGMA integrity_check`, and
 * every message the server acknowledged is stored, DONE and answered exactly once; nothing is left running.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, SEND_MESSAGE, type SentTurn } from '../../support/chat-helpers';
import { GraphQLTestClient } from '../../support/graphql-client';
import { prepareServeProcess, type ServeProcess, type WarmServeProcess } from '../../support/serve-process';
import { lastUserText } from '../pipeline/pipeline-helpers';
import { reportFigures } from './fault-kit';
import { checkStored, integrityCheck } from './sqlite-check';
import { pidAlive } from '../../support/pid-alive';

const KILLS = Number(process.env.FAULT_KILLS ?? 20);
const USERS = 4;
const trace = (...a: unknown[]) => process.env.FAULT_TRACE && console.log(new Date().toISOString(), ...a);
/** Every this many kills, the managed redis-server is SIGKILLed together with the server. */
const REDIS_TOO = 4;
/** Server processes kept loading ahead of the restarts (each one's modules, not yet its data folder). */
const STANDBYS = 2;
/** Messages each server acknowledges before it is killed (with more sends in flight). */
const ACKS_PER_RUN = Number(process.env.FAULT_ACKS_PER_RUN ?? 6);

/** The managed redis-server's pid, from its pid file in the data folder (null before it started). */
function managedRedisPid(dataDir: string): number | null {
  try {
    return Number(readFileSync(path.join(dataDir, 'redis', 'redis.pid'), 'utf8').trim());
  } catch {
    return null;
  }
}


describe('fault: the server SIGKILLed repeatedly during write load (SQLite, managed Redis)', () => {
  let dataDir: string;
  let configFile: string;
  let model: FakeOpenAIServer;
  let server: ServeProcess | null = null;
  /** The next servers' processes, loading their modules while the current one runs. */
  const standbys: WarmServeProcess[] = [];
  const redisPids = new Set<number>();
  /** Every server process spawned, so none outlives the suite. */
  const spawned: WarmServeProcess[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'muninn-fault-serve-'));
    model = await FakeOpenAIServer.start();
    model.setDefault((req) => ({ text: `Reply to ${lastUserText(req)}`, delayMs: 20, chunks: 2, chunkDelayMs: 10 }));
    configFile = path.join(dataDir, 'muninn.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        data_dir: dataDir,
        server: { host: '127.0.0.1', port: 0 },
        database: { url: null },
        redis: { url: null },
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 8 } }, max_retries: 5 },
        session: { summarizer_mode: 'manual' },
        log: { level: 'info' },
      }),
    );
  });

  afterAll(async () => {
    await server?.kill('SIGTERM');
    for (const p of spawned) if (p.child.exitCode === null && p.child.signalCode === null) p.discard();
    // A managed Redis still running (the last server's, or one a kill left behind) is stopped here.
    for (const pid of redisPids) if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
    await model.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Starts `muninn serve` on the data folder in the oldest standby process; keeps STANDBYS more loading. */
  async function start(name: string): Promise<ServeProcess> {
    while (standbys.length < STANDBYS + 1) {
      const p = prepareServeProcess(`standby-${spawned.length}`, 'all', configFile);
      spawned.push(p);
      standbys.push(p);
    }
    const p = await standbys.shift()!.start(60_000);
    for (const l of p.logs) if (Number(l.level) >= 40) trace(name, String(l.msg), JSON.stringify(l.err ?? '').slice(0, 160));
    const pid = managedRedisPid(dataDir);
    if (pid) redisPids.add(pid);
    return p;
  }

  it(`${KILLS} SIGKILLs of the server: integrity ok, every acknowledged message stored and answered once`, async () => {
    const started = Date.now();
    server = await start('serve-0');
    const ownerToken = readFileSync(path.join(dataDir, 'owner.token'), 'utf8').trim();
    const owner = new GraphQLTestClient(server.url, ownerToken);
    const tokens: string[] = [];
    for (let u = 0; u < USERS; u++) tokens.push((await createUserWithToken(owner, `writer ${u}`, 'MEMBER')).token);
    await owner.close();

    const acknowledged: string[] = [];
    let failedSends = 0;
    let kills = 0;
    let redisSurvived = 0;
    let redisKilled = 0;
    let seq = 0;
    while (kills < KILLS) {
      const url = server.url;
      const ackedBefore = acknowledged.length;
      let stop = false;
      // Writers keep sending until the server dies under them; only answered sends count as acknowledged.
      const writers = tokens.map(async (token, u) => {
        const client = new GraphQLTestClient(url, token);
        while (!stop) {
          const text = `k${kills}-u${u}-m${seq++}`;
          try {
            const res = await client.http<{ sendMessage: SentTurn }, unknown>(SEND_MESSAGE, { input: { text } });
            const id = res.data?.sendMessage?.messageId;
            if (id) acknowledged.push(id);
            else failedSends++;
          } catch {
            failedSends++;
            await new Promise((r) => setTimeout(r, 20));
          }
        }
      });
      await eventually(() => acknowledged.length >= ackedBefore + ACKS_PER_RUN, 60_000, `acknowledgements from server ${kills}`);
      const redisPid = managedRedisPid(dataDir);
      await server.kill('SIGKILL');
      kills++;
      // Every REDIS_TOO-th kill takes the managed Redis down as well (the machine lost both); otherwise
      // it outlives the server (its own process group) and the next start must stop it and start afresh.
      if (redisPid && kills % REDIS_TOO === 0) {
        process.kill(redisPid, 'SIGKILL');
        redisKilled++;
      } else if (redisPid && pidAlive(redisPid)) redisSurvived++;
      // Sends still in flight fail now (the socket closed); they were never acknowledged.
      stop = true;
      await Promise.all(writers);
      trace('killed', kills, 'acknowledged', acknowledged.length);
      server = await start(`serve-${kills}`);
      trace('restarted');
    }

    // The last server answers everything acknowledged before and across the kills.
    const lastStart = Date.now();
    const file = path.join(dataDir, 'muninn.sqlite');
    const check = await eventually(
      () => {
        const c = checkStored(file, acknowledged);
        return c.unanswered === 0 && c.stuck === 0 ? c : undefined;
      },
      60_000,
      'every acknowledged message answered',
    );
    const answeredAfterMs = Date.now() - lastStart;
    trace('all answered');
    await server.kill('SIGTERM');
    server = null;
    trace('stopped');
    const integrity = integrityCheck(file);
    const leftRunning = [...redisPids].filter(pidAlive).length;
    reportFigures('fault-suite', 'server-sigkill', {
      kills,
      ...check,
      failedSends,
      redisSurvivedKill: redisSurvived,
      redisKilledToo: redisKilled,
      managedRedisLeftRunning: leftRunning,
      integrity,
      lastAnsweredSecondsAfterLastStart: Math.round(answeredAfterMs / 1000),
      seconds: Math.round((Date.now() - started) / 1000),
    });
    expect(kills).toBe(KILLS);
    expect(redisSurvived + redisKilled).toBe(KILLS);
    expect(integrity).toBe('ok');
    expect(check.acknowledged).toBeGreaterThanOrEqual(KILLS * ACKS_PER_RUN);
    expect(check).toMatchObject({ lost: 0, unanswered: 0, duplicated: 0, stuck: 0, notDone: 0 });
    // Each restart stopped the managed Redis its killed predecessor left behind; the clean stop, its own.
    expect(leftRunning).toBe(0);
  }, 420_000);
});
