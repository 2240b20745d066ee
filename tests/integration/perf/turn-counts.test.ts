import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { EventCollector } from '../../support/session-events';
import { startPrivateRedis, type PrivateRedis } from '../../support/private-redis';
import { countSqlStatements, type SqlStatementCounter } from '../../support/sql-statement-counter';
import { TEST_DATABASE_URL_ENV } from '../../support/test-database';

/**
 * What one web turn costs the server, counted (issue 29; `npm run bench:turn-work` prints the same counts
 * with their sources): SQL statements and Redis commands per turn, one session, turns one after another
 * against the fake model. Counts do not depend on the machine's speed, so CI holds them to ceilings;
 * timings are measured by `npm run bench`, not here.
 *
 * Each turn is counted from `sendMessage` until its turn has finished (the session's lock is free and the
 * turns queue is empty), so a message never arrives while the previous turn is still ending — that race
 * is what makes the bench's counts vary by a fraction. The summarizer only queues each exchange here
 * (its batch never fills): condensing is background work of its own, not the turn's.
 */

/**
 * Targets of issue 29, held as they are: SQL ≤ 10, Redis ≤ 12 (+ ≤ 60 inside scripts). The code reaches about
 * 9.1 statements and 11.4 commands (+ 40 in scripts) per turn, background work that runs by the clock
 * included (idle workers' BZPOPMIN time-outs, reclaim checks, process heartbeats, the token read again
 * once a second).
 */
const CEILING = { sql: 10, redis: 12, inScripts: 60 };
const TURNS = 15;

/** BullMQ's scripts by their SHA1 (EVALSHA), for a readable report. */
function bullScriptNames(): Map<string, string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const scripts = require('bullmq/dist/cjs/scripts') as Record<string, { name?: string; content?: string }>;
  const names = new Map<string, string>();
  for (const s of Object.values(scripts)) if (s?.content && s.name) names.set(createHash('sha1').update(s.content).digest('hex'), s.name);
  return names;
}

describe('per-turn work of a web turn (counted)', () => {
  let redis: PrivateRedis;
  let model: FakeOpenAIServer;
  let t: TestApp;
  let sql: SqlStatementCounter;
  let monitor: Redis;
  let probe: Redis;
  let probeSource = '';
  const commands = new Map<string, number>();
  let inScripts = 0;
  let counting = false;
  const pgBase = process.env[TEST_DATABASE_URL_ENV];

  const scriptNames = bullScriptNames();

  beforeAll(async () => {
    // The statement counter sees the SQLite driver of this process, so this file runs on SQLite in every CI pass.
    delete process.env[TEST_DATABASE_URL_ENV];
    redis = await startPrivateRedis();
    model = await FakeOpenAIServer.start({ chunks: 3 });
    sql = countSqlStatements();
    t = await startTestApp({
      config: {
        redis: { url: redis.url },
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 32768, max_concurrency: 16 } } },
        // 4 + 15 exchanges stay below the batch of 20, so no summarizer call runs while counting.
        session: { summarizer_batch: 20, summarizer_idle_seconds: 3600 },
        log: { level: 'warn' },
      },
    });
    probe = new Redis(redis.url);
    await probe.ping();
    probeSource = `127.0.0.1:${(probe as unknown as { stream: { localPort: number } }).stream.localPort}`;
    monitor = await new Redis(redis.url).monitor();
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (!counting || source === probeSource) return;
      if (source === 'lua') {
        inScripts++;
        return;
      }
      let name = String(args[0]).toUpperCase();
      if (name === 'EVALSHA') name += ` ${scriptNames.get(String(args[1])) ?? String(args[1]).slice(0, 8)}`;
      commands.set(name, (commands.get(name) ?? 0) + 1);
    });
  });

  afterAll(async () => {
    sql?.stop();
    monitor?.disconnect();
    probe?.disconnect();
    await t?.close();
    await model?.close();
    await redis?.stop();
    if (pgBase !== undefined) process.env[TEST_DATABASE_URL_ENV] = pgBase;
  });

  it(`stays within ${CEILING.sql} SQL statements and ${CEILING.redis} Redis commands (+ ${CEILING.inScripts} in scripts) per turn`, async () => {
    const owner = t.client(t.ownerToken);
    const user = await createUserWithToken(owner, 'counted', 'MEMBER');
    const client = t.client(user.token);
    const prefix = t.config.redis.prefix;
    const first = await send(client, 'warm up 0');
    const sessionId = first.sessionId;
    const events = new EventCollector(client.wsClient(), sessionId);
    const finished = () => events.count('TurnFinished');
    /** The turn's drain job has ended: its session lock is released and no turns job waits or runs. */
    const drained = async () => {
      const [lock, active, wait, prioritized] = await Promise.all([
        probe.exists(`${prefix}:turn:lock:${sessionId}`),
        probe.llen(`${prefix}:bull:turns:active`),
        probe.llen(`${prefix}:bull:turns:wait`),
        probe.zcard(`${prefix}:bull:turns:prioritized`),
      ]);
      return lock + active + wait + prioritized === 0;
    };
    const turn = async (text: string) => {
      const before = finished();
      const sent = await send(client, text, sessionId);
      expect(sent.sessionId).toBe(sessionId);
      await events.waitFor(() => finished() > before);
      await eventually(drained, 10_000, 'the drain job to end');
    };
    await events.waitFor(() => finished() >= 1);
    await eventually(drained, 10_000, 'the drain job to end');
    for (let i = 1; i < 4; i++) await turn(`warm up ${i}`);

    sql.reset();
    counting = true;
    for (let i = 0; i < TURNS; i++) await turn(`hello number ${i}`);
    counting = false;
    events.stop();
    await client.close();

    expect(events.events.filter((e) => e.__typename === 'TurnFinished').every((e) => e.status === 'done')).toBe(true);
    const redisTotal = [...commands.values()].reduce((a, b) => a + b, 0);
    const per = { sql: sql.total() / TURNS, redis: redisTotal / TURNS, inScripts: inScripts / TURNS };
    const report = [
      `per turn: ${per.sql.toFixed(2)} SQL statements, ${per.redis.toFixed(2)} Redis commands (+ ${per.inScripts.toFixed(2)} in scripts)`,
      ...[...sql.counts.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `  sql ${(v / TURNS).toFixed(2)}  ${k.slice(0, 120)}`),
      ...[...commands.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `  redis ${(v / TURNS).toFixed(2)}  ${k}`),
    ].join('\n');
    if (per.sql > CEILING.sql || per.redis > CEILING.redis || per.inScripts > CEILING.inScripts || process.env.TURN_COUNTS_REPORT) console.log(report);
    expect(per.sql).toBeLessThanOrEqual(CEILING.sql);
    expect(per.redis).toBeLessThanOrEqual(CEILING.redis);
    expect(per.inScripts).toBeLessThanOrEqual(CEILING.inScripts);
  });
});
