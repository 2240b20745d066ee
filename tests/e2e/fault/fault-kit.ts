import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { In } from 'typeorm';
import { Redis } from 'ioredis';
import { Message, MessageRole, MessageStatus } from '../../../server/modules/sessions';
import type { TestApp } from '../../support/test-app';

export const ARTIFACTS = path.resolve(__dirname, '../../artifacts');

/** Prints a suite's figures and merges them into tests/artifacts/<file>.json, for the closing note. */
export function reportFigures(file: string, name: string, figures: Record<string, unknown>): void {
  mkdirSync(ARTIFACTS, { recursive: true });
  const target = path.join(ARTIFACTS, `${file}.json`);
  const all = existsSync(target) ? (JSON.parse(readFileSync(target, 'utf8')) as Record<string, unknown>) : {};
  all[name] = figures;
  writeFileSync(target, JSON.stringify(all, null, 2));
  console.log(`[${file}] ${name}: ${JSON.stringify(figures)}`);
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function pingRedis(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.setTimeout(500, () => (s.destroy(), resolve(false)));
    s.on('error', () => resolve(false));
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => (s.destroy(), resolve(d.toString().startsWith('+PONG'))));
  });
}

/** A redis-server of the test's own (append-only on) on a fixed free port, which the test stops and starts. */
export class OwnRedis {
  private child: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(dir: string): Promise<OwnRedis> {
    mkdirSync(dir, { recursive: true });
    const redis = new OwnRedis(await freePort(), dir);
    await redis.up();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--dir', this.dir], { stdio: 'ignore' });
    for (let i = 0; i < 200 && !(await pingRedis(this.port)); i++) await new Promise((r) => setTimeout(r, 25));
    if (!(await pingRedis(this.port))) throw new Error('own redis-server did not start');
  }

  /** Stops the server (SIGTERM: a clean shutdown, or SIGKILL: a crash; append-only either way). */
  async down(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await gone;
  }
}

export interface ReplyCheck {
  accepted: number;
  answered: number;
  lost: number;
  duplicated: number;
  /** Messages of these sessions left QUEUED or PROCESSING. */
  stuck: number;
  /** Accepted messages that did not end DONE. */
  notDone: number;
  outOfOrder: number;
}

/**
 * For the given user messages (ids, in the order they were accepted per session): how many have no
 * reply, more than one, are not DONE, are left running, or were answered out of order in their session.
 */
export async function checkReplies(t: TestApp, acceptedBySession: Map<string, string[]>): Promise<ReplyCheck> {
  const ctx = t.app.systemCtx('test');
  const repo = t.app.db.repo(ctx, Message);
  const out: ReplyCheck = { accepted: 0, answered: 0, lost: 0, duplicated: 0, stuck: 0, notDone: 0, outOfOrder: 0 };
  for (const [sessionId, ids] of acceptedBySession) {
    const rows = await repo.find({ where: { sessionId: In([sessionId]) }, order: { id: 'ASC' } });
    const replies = rows.filter((m) => m.role === MessageRole.ASSISTANT);
    const users = new Map(rows.filter((m) => m.role === MessageRole.USER).map((m) => [m.id, m]));
    out.accepted += ids.length;
    const replyOrder: string[] = [];
    for (const id of ids) {
      const mine = replies.filter((r) => r.replyToId === id);
      if (mine.length === 0) out.lost++;
      else out.answered++;
      if (mine.length > 1) out.duplicated += mine.length - 1;
      if (users.get(id)?.status !== MessageStatus.DONE) out.notDone++;
    }
    for (const r of replies) if (r.replyToId && ids.includes(r.replyToId)) replyOrder.push(r.replyToId);
    const expected = ids.filter((id) => replyOrder.includes(id));
    if (JSON.stringify([...new Set(replyOrder)]) !== JSON.stringify(expected)) out.outOfOrder++;
    out.stuck += rows.filter((m) => m.status === MessageStatus.PROCESSING || m.status === MessageStatus.QUEUED).length;
  }
  return out;
}

/** Queues of repeating jobs: they always hold one delayed job. */
const REPEATING = new Set(['maintenance', 'heartbeat']);

/**
 * Resolves once no queue has a job waiting, active, delayed or prioritized (asked over GraphQL as OWNER);
 * the queues of repeating jobs (maintenance, heartbeat) always hold a delayed one and are not counted, and
 * a delayed summarizer job is a batch waiting for its session to go quiet (`session.summarizer_idle_seconds`).
 */
export async function queuesIdle(t: TestApp, timeoutMs = 30_000): Promise<void> {
  const owner = t.client(t.ownerToken);
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const res = await owner.http<{ queues: Array<{ name: string; counts: Record<string, number> }> }, unknown>(
        '{ queues { name counts { waiting active delayed prioritized } } }',
      );
      const busy = (res.data?.queues ?? []).filter(
        (q) => !REPEATING.has(q.name) && Object.entries(q.counts).some(([state, n]) => n > 0 && !(q.name === 'summarizer' && state === 'delayed')),
      );
      if (res.data && busy.length === 0) return;
      if (Date.now() > deadline) throw new Error(`queues still busy: ${JSON.stringify(busy)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await owner.close();
  }
}

/**
 * Resolves once every chunk the platform accepted has its "sent" mark in Redis (the worker saw the
 * platform's answer). Killing a worker before that is the one at-least-once window (README): the chunk
 * is sent again after the restart. Fault tests that count duplicates wait for this before they kill.
 */
export async function sentMarksWritten(t: TestApp, chunkKeys: string[], timeoutMs = 15_000): Promise<void> {
  const redis = new Redis(t.app.redis!.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const deadline = Date.now() + timeoutMs;
  try {
    await redis.connect();
    for (;;) {
      const marks = chunkKeys.length ? await redis.mget(chunkKeys.map((k) => `${t.config.redis.prefix}:outbound:sent:${k}`)) : [];
      const missing = marks.filter((m) => m === null).length;
      if (missing === 0) return;
      if (Date.now() > deadline) throw new Error(`${missing} accepted chunks still have no sent mark after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    redis.disconnect();
  }
}
