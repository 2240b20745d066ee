import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Ctx } from '../common/ctx';
import type { ErasureScope, UserErasureHook } from '../modules/userdata';

/** Tables whose ids name Redis keys or appear in job payloads (session events, locks, mailboxes, beat ticks). */
const ID_TABLES = ['sessions', 'beats'];

/**
 * The Redis part of an erasure: every key of the deployment (`<prefix>:*`) whose name holds the user's id,
 * one of their session or beat ids, or one of their channel handles (`telegram:<handle>`) is deleted; queue
 * jobs whose payload or result names them are removed through BullMQ (a job running right now is left to
 * finish and is caught by the erasure's second sweep).
 */
export class RedisUserKeys implements UserErasureHook {
  readonly name = 'redis keys';

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async erase(ctx: Ctx, scope: ErasureScope): Promise<number> {
    const needles = [scope.userId, ...ID_TABLES.flatMap((t) => scope.ids.get(t) ?? [])].filter((n) => n.length >= 8);
    const handles = scope.handles.map((h) => `${h.channel}:${h.handle}`);
    const mentions = (text: string) => needles.some((n) => text.includes(n)) || handles.some((h) => text.includes(h));
    const bull = `${this.prefix}:bull:`;
    const queues = new Map<string, Queue>();
    let removed = 0;
    // Streams are scrubbed last: removing a job adds a `removed` event that names it to its queue's stream.
    const streams: string[] = [];
    /** Jobs removed, as `<queue>:<jobId>`: their queue events go too (a result holds the user's words without naming them). */
    const removedJobs = new Set<string>();
    try {
      let cursor = '0';
      do {
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${this.prefix}:*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) {
          if ((await this.redis.type(key)) === 'stream') {
            streams.push(key);
          } else if (key.startsWith(bull)) {
            removed += await this.eraseJob(key.slice(bull.length), key, mentions, queues, ctx, removedJobs);
          } else if (mentions(key)) {
            removed += await this.redis.del(key);
          }
        }
      } while (cursor !== '0');
      for (const key of streams) {
        if (mentions(key)) {
          removed += await this.redis.del(key);
          continue;
        }
        const queue = key.startsWith(bull) && key.endsWith(':events') ? key.slice(bull.length, -':events'.length) : null;
        removed += await this.scrubStream(key, (fields) => {
          if (mentions(fields.join('\u0000'))) return true;
          const i = fields.indexOf('jobId');
          return queue !== null && i >= 0 && removedJobs.has(`${queue}:${fields[i + 1]}`);
        });
      }
    } finally {
      for (const q of queues.values()) await q.close();
    }
    return removed;
  }

  /** Entries of a stream (BullMQ's queue events, session events) that name the user are deleted. */
  private async scrubStream(key: string, matches: (fields: string[]) => boolean): Promise<number> {
    let removed = 0;
    let start = '-';
    for (;;) {
      const entries = await this.redis.xrange(key, start, '+', 'COUNT', 1000);
      const ids = entries.filter(([, fields]) => matches(fields)).map(([id]) => id);
      if (ids.length) removed += await this.redis.xdel(key, ...ids);
      if (entries.length < 1000) break;
      start = `(${entries[entries.length - 1]![0]}`;
    }
    return removed;
  }

  /** A BullMQ key: a job hash naming the user is removed with its job; other keys naming them are deleted. */
  private async eraseJob(rest: string, key: string, mentions: (text: string) => boolean, queues: Map<string, Queue>, ctx: Ctx, removedJobs: Set<string>): Promise<number> {
    const sep = rest.indexOf(':');
    if (sep < 0) return 0;
    const queueName = rest.slice(0, sep);
    const jobId = rest.slice(sep + 1);
    const type = await this.redis.type(key);
    if (type === 'hash') {
      const [name, data, result] = await this.redis.hmget(key, 'name', 'data', 'returnvalue');
      if (name !== null && data !== null) {
        if (!mentions(`${data}${result ?? ''}`) && !mentions(jobId)) return 0;
        let queue = queues.get(queueName);
        if (!queue) {
          queue = new Queue(queueName, { connection: this.redis, prefix: this.prefix + ':bull' });
          queues.set(queueName, queue);
        }
        const n = await queue.remove(jobId).catch((err: Error) => {
          ctx.logger.warn({ err, queue: queueName, jobId }, 'could not remove a job of an erased user');
          return 0;
        });
        if (n) removedJobs.add(`${queueName}:${jobId}`);
        return n;
      }
    }
    return mentions(jobId) ? this.redis.del(key) : 0;
  }
}
