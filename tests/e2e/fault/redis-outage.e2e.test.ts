/**
 * Fault suite: the server's Redis (the test's own redis-server, append-only on) is restarted during load
 * and then unreachable for 10 s. No accepted message is lost or answered twice; `sendMessage` during the
 * outage fails at once with a clear, retryable SERVICE_UNAVAILABLE (nothing stored); `/readyz` reports
 * the outage; the server recovers by itself when Redis is back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, SEND_MESSAGE, type SentTurn } from '../../support/chat-helpers';
import type { GraphQLTestClient, GqlError } from '../../support/graphql-client';
import { lastUserText } from '../pipeline/pipeline-helpers';
import { checkReplies, OwnRedis, reportFigures } from './fault-kit';

const USERS = 5;
const PER_USER = 8;
const OUTAGE_MS = 10_000;

describe('fault: Redis restarted and unreachable', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let redis: OwnRedis;
  let redisDir: string;
  const clients: GraphQLTestClient[] = [];
  const accepted = new Map<string, string[]>();
  let consoleErrors: jest.SpyInstance;

  beforeAll(async () => {
    consoleErrors = jest.spyOn(console, 'error');
    redisDir = mkdtempSync(path.join(os.tmpdir(), 'muninn-fault-redis-'));
    redis = await OwnRedis.start(redisDir);
    model = await FakeOpenAIServer.start();
    model.setDefault((req) => ({ text: `Reply to ${lastUserText(req)}`, delayMs: 30 }));
    t = await startTestApp({
      config: {
        redis: { url: redis.url },
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } }, max_retries: 5 },
        log: { level: 'error' },
      },
    });
    const owner = t.client(t.ownerToken);
    for (let u = 0; u < USERS; u++) clients.push(t.client((await createUserWithToken(owner, `user ${u}`, 'MEMBER')).token));
    await owner.close();
  });

  afterAll(async () => {
    for (const c of clients) await c.close();
    await t.close();
    await model.close();
    await redis.down('SIGKILL');
    rmSync(redisDir, { recursive: true, force: true });
  });

  /** One sendMessage; an accepted message is remembered for the final check. */
  async function sendOnce(client: GraphQLTestClient, text: string): Promise<{ ok: true; turn: SentTurn } | { ok: false; error: GqlError; ms: number }> {
    const started = Date.now();
    const res = await client.http<{ sendMessage: SentTurn }, unknown>(SEND_MESSAGE, { input: { text } });
    if (res.data?.sendMessage) {
      const turn = res.data.sendMessage;
      accepted.set(turn.sessionId, [...(accepted.get(turn.sessionId) ?? []), turn.messageId!]);
      return { ok: true, turn };
    }
    return { ok: false, error: res.errors![0]!, ms: Date.now() - started };
  }

  async function readyz(): Promise<{ status: number; body: { status: string; checks: Record<string, string> } }> {
    const res = await fetch(`${t.url}/readyz`);
    return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string> } };
  }

  it('a Redis restart during load loses nothing: refused sends are retryable and retried, every accepted one answered once', async () => {
    let refused = 0;
    let restarted = false;
    await Promise.all(
      clients.map(async (client, u) => {
        for (let m = 0; m < PER_USER; m++) {
          for (;;) {
            const out = await sendOnce(client, `restart u${u}-m${m}`);
            if (out.ok) break;
            expect(out.error.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryable: true });
            refused++;
            await new Promise((r) => setTimeout(r, 100));
          }
          if (u === 0 && m === PER_USER / 2 && !restarted) {
            restarted = true;
            await redis.down('SIGTERM');
            await redis.up();
          }
        }
      }),
    );
    const check = await eventually(async () => {
      const c = await checkReplies(t, accepted);
      return c.answered === c.accepted && c.stuck === 0 ? c : undefined;
    }, 60_000, 'every accepted message answered after the restart');
    reportFigures('fault-suite', 'redis-restart', { ...check, refusedRetryable: refused });
    expect(check).toMatchObject({ accepted: USERS * PER_USER, lost: 0, duplicated: 0, notDone: 0, outOfOrder: 0 });
  }, 120_000);

  it(`Redis unreachable for ${OUTAGE_MS / 1000} s: sendMessage fails fast and retryable, /readyz says so, and it recovers by itself`, async () => {
    const before = [...accepted.values()].flat().length;
    await redis.down('SIGKILL');
    const outageEnds = Date.now() + OUTAGE_MS;
    const latencies: number[] = [];
    const readiness: number[] = [];
    while (Date.now() < outageEnds) {
      const out = await sendOnce(clients[0]!, `during the outage ${latencies.length}`);
      expect(out.ok).toBe(false);
      if (out.ok) break;
      expect(out.error.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryable: true });
      expect(out.error.message).toMatch(/unreachable.*nothing was stored.*try again/i);
      latencies.push(out.ms);
      const ready = await readyz();
      readiness.push(ready.status);
      expect(ready.body).toEqual({ status: 'not ready', checks: { database: 'ok', redis: 'unavailable', startup: 'ok' } });
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(new Set(readiness)).toEqual(new Set([503]));
    expect([...accepted.values()].flat()).toHaveLength(before);

    await redis.up();
    await eventually(async () => (await readyz()).status === 200, 30_000, '/readyz ready again');
    const after = await eventually(async () => {
      const out = await sendOnce(clients[1]!, 'after the outage');
      return out.ok ? out.turn : undefined;
    }, 30_000, 'sendMessage accepted again');
    expect(after.status).toBe('QUEUED');
    const check = await eventually(async () => {
      const c = await checkReplies(t, accepted);
      return c.answered === c.accepted && c.stuck === 0 ? c : undefined;
    }, 60_000, 'the message after the outage answered');
    reportFigures('fault-suite', 'redis-outage', {
      outageMs: OUTAGE_MS,
      refusedDuringOutage: latencies.length,
      maxRefusalMs: Math.max(...latencies),
      readyzDuringOutage: [...new Set(readiness)],
      ...check,
    });
    expect(check).toMatchObject({ lost: 0, duplicated: 0, notDone: 0, outOfOrder: 0 });
  }, 120_000);

  it('the outages flooded neither the console nor the error log (connection errors are one warning per client)', () => {
    const errorLines = t.logs.entries().filter((e) => Number(e.level) >= 50);
    reportFigures('fault-suite', 'redis-noise', { consoleErrors: consoleErrors.mock.calls.length, errorLogLines: errorLines.length });
    expect(consoleErrors.mock.calls.map((c) => String(c[0]).slice(0, 200))).toEqual([]);
    expect(errorLines.map((e) => `${e.msg} (${String(e.queue ?? e.module)}): ${String((e.err as { message?: string } | undefined)?.message ?? '')}`)).toEqual([]);
    consoleErrors.mockRestore();
  });
});
