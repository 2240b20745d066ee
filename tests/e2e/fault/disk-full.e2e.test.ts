/**
 * Fault suite: the data folder's filesystem runs full under a running `muninn serve` (SQLite file in the
 * folder; a small tmpfs, or a loop-mounted ext4 image, of the test's own). `sendMessage` then fails with a
 * clear SERVICE_UNAVAILABLE that says storage is full (no internal error, no stack), the server stays up and
 * `/healthz` answers; once space is freed it works again, the SQLite file passes `PRAGMA integrity_check`
 * and every acknowledged message is intact and answered once.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, SEND_MESSAGE, type SentTurn } from '../../support/chat-helpers';
import { GraphQLTestClient, type GqlError } from '../../support/graphql-client';
import { startServeProcess, type ServeProcess } from '../../support/serve-process';
import { lastUserText } from '../pipeline/pipeline-helpers';
import { reportFigures } from './fault-kit';
import { mountSmallDisk, type SmallDisk } from './small-disk';
import { checkStored, integrityCheck } from './sqlite-check';

const DISK_MB = 48;
const BEFORE = 10;
const IN_FLIGHT = 3;
/** Sends tried on the full disk before the suite gives up on seeing one refused. */
const MAX_TRIES_FULL = 400;

describe('fault: disk full on the data folder', () => {
  let disk: SmallDisk;
  let configDir: string;
  let model: FakeOpenAIServer;
  let server: ServeProcess | null = null;
  let client: GraphQLTestClient;
  const acknowledged: string[] = [];

  beforeAll(async () => {
    disk = mountSmallDisk(DISK_MB);
    configDir = mkdtempSync(path.join(os.tmpdir(), 'muninn-fault-disk-'));
    model = await FakeOpenAIServer.start();
    model.setDefault((req) => ({ text: `Reply to ${lastUserText(req)}`, delayMs: lastUserText(req).startsWith('in flight') ? 1500 : 10 }));
    const configFile = path.join(configDir, 'muninn.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        data_dir: disk.dir,
        server: { host: '127.0.0.1', port: 0 },
        database: { url: null },
        redis: { url: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', prefix: `t${randomUUID().slice(0, 8)}` },
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } } },
        session: { summarizer_mode: 'manual' },
        log: { level: 'info' },
      }),
    );
    server = await startServeProcess('serve', 'all', configFile, 120_000);
    const owner = new GraphQLTestClient(server.url, readFileSync(path.join(disk.dir, 'owner.token'), 'utf8').trim());
    client = new GraphQLTestClient(server.url, (await createUserWithToken(owner, 'writer', 'MEMBER')).token);
    await owner.close();
  }, 150_000);

  afterAll(async () => {
    await client?.close();
    await server?.kill('SIGTERM');
    await model?.close();
    disk?.unmount();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  async function sendOnce(text: string): Promise<{ ok: true; turn: SentTurn } | { ok: false; status: number; error: GqlError }> {
    const res = await client.http<{ sendMessage: SentTurn }, unknown>(SEND_MESSAGE, { input: { text } });
    const turn = res.data?.sendMessage;
    if (turn?.messageId) {
      acknowledged.push(turn.messageId);
      return { ok: true, turn };
    }
    if (!res.errors?.length) throw new Error(`sendMessage answered neither a message id nor an error: ${JSON.stringify(res)}`);
    return { ok: false, status: res.status, error: res.errors[0]! };
  }

  const dbFile = () => path.join(disk.dir, 'muninn.sqlite');

  it(`a full disk refuses messages clearly, the server stays up, and works again once space is freed (${DISK_MB} MB filesystem)`, async () => {
    for (let m = 0; m < BEFORE; m++) expect((await sendOnce(`before ${m}`)).ok).toBe(true);
    await eventually(() => checkStored(dbFile(), acknowledged).unanswered === 0, 60_000, 'the messages before the fill answered');

    // Turns in flight when the disk runs full: their replies cannot be stored until space is freed.
    for (let m = 0; m < IN_FLIGHT; m++) expect((await sendOnce(`in flight ${m}`)).ok).toBe(true);
    const filled = disk.fill();
    let refusal: { status: number; error: GqlError } | null = null;
    let acceptedWhileFull = 0;
    let tries = 0;
    while (!refusal && tries < MAX_TRIES_FULL) {
      tries++;
      const out = await sendOnce(`while full ${tries} ${'x'.repeat(2000)}`);
      if (out.ok) acceptedWhileFull++;
      else refusal = out;
    }
    expect(refusal).not.toBeNull();
    const { status, error } = refusal!;
    // A clear answer the client can act on: no internal error, no stack, no SQL.
    expect(status).toBeLessThan(500);
    expect(error.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', reason: 'STORAGE_FULL', retryable: true });
    expect(error.message).toMatch(/storage is full/i);
    expect(JSON.stringify(error)).not.toMatch(/SQLITE|stack|\n\s+at /i);
    // The server stays up and says so.
    expect(server!.child.exitCode).toBeNull();
    const health = await fetch(`${server!.url}/healthz`);
    expect(health.status).toBe(200);
    // Still refused while the disk stays full (nothing half-stored in between).
    const again = await sendOnce('still full');
    const refusedAgain = !again.ok;

    // A turn that was in flight tries to store its reply on the full disk and fails (to be run again).
    const failedOnFull = () => server!.logs.filter((l) => l.msg === 'turn failed' && /disk is full/.test(JSON.stringify(l.err ?? ''))).length;
    await eventually(() => failedOnFull() > 0, 30_000, 'a turn in flight failing on the full disk');
    const turnsFailedWhileFull = failedOnFull();
    disk.free();
    const after = await eventually(async () => {
      const out = await sendOnce('after freeing space');
      return out.ok ? out.turn : undefined;
    }, 30_000, 'sendMessage accepted again after space was freed');
    expect(after.status).toBe('QUEUED');
    let last = checkStored(dbFile(), acknowledged);
    const check = await eventually(
      () => {
        last = checkStored(dbFile(), acknowledged);
        return last.unanswered === 0 && last.stuck === 0 ? last : undefined;
      },
      60_000,
      'every acknowledged message answered after space was freed',
    ).catch((err: Error) => {
      const problems = server!.logs.filter((l) => Number(l.level) >= 40).map((l) => `${String(l.msg)} ${JSON.stringify(l.err ?? l.reason ?? '').slice(0, 200)}`);
      throw new Error(`${err.message}: ${JSON.stringify(last)}; server warnings and errors: ${problems.slice(-15).join(' | ')}`);
    });
    await server!.kill('SIGTERM');
    const exitCode = await server!.exited;
    server = null;
    const integrity = integrityCheck(dbFile());
    reportFigures('fault-suite', 'disk-full', {
      method: disk.method,
      diskMb: DISK_MB,
      fillerBytes: filled,
      triesUntilRefused: tries,
      acceptedWhileFull,
      refusedAgain,
      turnsFailedWhileFull,
      refusal: { status, code: error.extensions?.code, message: error.message },
      ...check,
      integrity,
      exitCode,
    });
    expect(integrity).toBe('ok');
    expect(check).toMatchObject({ lost: 0, unanswered: 0, duplicated: 0, stuck: 0, notDone: 0 });
  }, 240_000);
});
