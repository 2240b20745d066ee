import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSqliteDriver } from '../../server/persistence/sqlite-driver';

/** better-sqlite3 12 or 13, as the server loads it on this Node. */
const Database = loadSqliteDriver();
import { Queue, QueueEvents, Worker } from 'bullmq';
import Redis from 'ioredis';
import type { FakeOpenAIServer } from '../../tests/support/fakes/fake-openai-server';
import { HttpClient } from './http-client';
import { dropPrefix, LOCAL_REDIS } from './server';
import { closedLoop, now, summarize, type Summary } from './stats';

const PLAIN_SERVER = `
const http = require('node:http');
const s = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.setHeader('content-type', 'application/json'); res.end('{"data":{"__typename":"Query"}}'); }); });
s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'));
`;

/** A plain Node HTTP server in its own process, hit by the same keep-alive client as /graphql. */
export async function httpFloor(concurrency: number, durationMs: number): Promise<{ latency: Summary; throughput: number }> {
  const child = spawn(process.execPath, ['-e', PLAIN_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  const client = new HttpClient(`http://127.0.0.1:${port}`, concurrency);
  const body = JSON.stringify({ query: '{ __typename }' });
  try {
    await closedLoop(concurrency, { count: 200 }, async () => void (await client.post('/graphql', body)));
    const r = await closedLoop(concurrency, { durationMs }, async () => void (await client.post('/graphql', body)));
    return { latency: summarize(r.latencies), throughput: (r.latencies.length / r.wallMs) * 1000 };
  } finally {
    client.close();
    child.kill();
  }
}

/** One BullMQ job round trip: add → a worker runs it → the producer hears it completed (QueueEvents). */
export async function bullmqFloor(count: number): Promise<{ latency: Summary }> {
  const prefix = `bench-floor-${randomBytes(4).toString('hex')}`;
  const conn = () => new Redis(LOCAL_REDIS, { maxRetriesPerRequest: null });
  const connections = [conn(), conn(), conn()];
  const queue = new Queue('floor', { connection: connections[0]!, prefix });
  const events = new QueueEvents('floor', { connection: connections[1]!, prefix });
  const worker = new Worker('floor', async () => 'ok', { connection: connections[2]!, prefix, concurrency: 1 });
  await Promise.all([events.waitUntilReady(), worker.waitUntilReady()]);
  const waiting = new Map<string, () => void>();
  events.on('completed', ({ jobId }) => waiting.get(jobId)?.());
  const samples: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const id = randomUUID();
      const t0 = now();
      const done = new Promise<void>((resolve) => waiting.set(id, resolve));
      await queue.add('x', { i }, { jobId: id, removeOnComplete: true });
      await done;
      waiting.delete(id);
      if (i >= 20) samples.push(now() - t0);
    }
  } finally {
    await worker.close();
    await events.close();
    await queue.close();
    for (const c of connections) c.disconnect();
    await dropPrefix(prefix);
  }
  return { latency: summarize(samples) };
}

/**
 * The SQLite writes of a turn on a WAL file with better-sqlite3 directly: the queued user message, the
 * reply with the message marked answered and the session touched, the model call's usage row.
 */
export function sqliteTurnFloor(count: number): { latency: Summary } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-bench-sqlite-'));
  const db = new Database(path.join(dir, 'floor.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, lastActivityAt TEXT, messageCount INTEGER);
    CREATE TABLE messages (id TEXT PRIMARY KEY, sessionId TEXT, role TEXT, status TEXT, content TEXT, createdAt TEXT);
    CREATE INDEX m_s ON messages(sessionId, createdAt);
    CREATE TABLE model_calls (id TEXT PRIMARY KEY, sessionId TEXT, inputTokens INTEGER, outputTokens INTEGER, createdAt TEXT);`);
  db.prepare('INSERT INTO sessions VALUES (?, ?, 0)').run('s1', new Date().toISOString());
  const insMsg = db.prepare('INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?)');
  const setStatus = db.prepare('UPDATE messages SET status = ? WHERE id = ?');
  const touch = db.prepare('UPDATE sessions SET lastActivityAt = ?, messageCount = messageCount + 1 WHERE id = ?');
  const insCall = db.prepare('INSERT INTO model_calls VALUES (?, ?, ?, ?, ?)');
  const samples: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const t0 = now();
      const at = new Date().toISOString();
      const userId = randomUUID();
      insMsg.run(userId, 's1', 'user', 'QUEUED', 'hello there', at);
      db.transaction(() => {
        insMsg.run(randomUUID(), 's1', 'assistant', 'DONE', 'Echo: hello there', at);
        setStatus.run('DONE', userId);
        touch.run(at, 's1');
      })();
      insCall.run(randomUUID(), 's1', 900, 10, at);
      samples.push(now() - t0);
    }
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { latency: summarize(samples) };
}

/** The fake model called directly: one streamed chat completion read to its end. */
export async function fakeModelFloor(model: FakeOpenAIServer, count: number): Promise<{ latency: Summary }> {
  const client = new HttpClient(model.baseUrl.replace(/\/v1$/, ''), 1);
  const body = JSON.stringify({ model: 'fake-model', stream: true, messages: [{ role: 'system', content: 'x'.repeat(2000) }, { role: 'user', content: 'hello' }] });
  const samples: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const t0 = now();
      const res = await client.post('/v1/chat/completions', body);
      if (res.status !== 200) throw new Error(`fake model ${res.status}`);
      if (i >= 10) samples.push(now() - t0);
    }
  } finally {
    client.close();
    model.reset();
  }
  return { latency: summarize(samples) };
}
