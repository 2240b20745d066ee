import type { Redis } from 'ioredis';
import type { Mailbox, MailItem } from '../channels/delivery';
import { luaScript } from './lua-script';
import { RedisLock } from './redis-lock';
import type { ProcessLiveness } from './process-liveness';

const DONE_TTL_SECONDS = 7 * 86_400;

/**
 * Adds an item to its chat's mailbox unless it is already waiting or was delivered.
 * KEYS: done marker, item, mailbox. ARGV: item JSON, TTL seconds, key.
 */
const ADD_TO_MAILBOX = `
if redis.call('exists', KEYS[1]) == 1 then return 0 end
if redis.call('set', KEYS[2], ARGV[1], 'EX', ARGV[2], 'NX') then
  redis.call('rpush', KEYS[3], ARGV[3])
  return 1
end
return 0`;
const addToMailbox = luaScript('mailbox_add', 3, ADD_TO_MAILBOX);

/** The outbound mailboxes in Redis: a list of keys per chat, each item's chunks, sent marks, back-offs. */
export class RedisMailbox implements Mailbox {
  private readonly locks: RedisLock;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    lockMs: number,
    liveness?: ProcessLiveness,
  ) {
    this.locks = new RedisLock(redis, lockMs, liveness);
  }

  private k(kind: 'mailbox' | 'item' | 'done' | 'failures' | 'retry' | 'lock', id: string): string {
    return `${this.prefix}:outbound:${kind}:${id}`;
  }

  private sentKey(key: string, index: number): string {
    return `${this.prefix}:outbound:sent:${key}:${index}`;
  }

  async add(chat: string, item: MailItem): Promise<boolean> {
    const added = await addToMailbox(
      this.redis,
      [this.k('done', item.key), this.k('item', item.key), this.k('mailbox', chat)],
      [JSON.stringify({ chunks: item.chunks, ...(item.stream ? { stream: item.stream } : {}), ...(item.voice ? { voice: item.voice } : {}) }), String(DONE_TTL_SECONDS), item.key],
    );
    return added === 1;
  }

  async head(chat: string): Promise<MailItem | null> {
    const key = await this.redis.lindex(this.k('mailbox', chat), 0);
    if (key === null) return null;
    const raw = await this.redis.get(this.k('item', key));
    const stored = raw ? (JSON.parse(raw) as Omit<MailItem, 'key'>) : { chunks: [] };
    return { key, chunks: stored.chunks, ...(stored.stream ? { stream: stored.stream } : {}), ...(stored.voice ? { voice: stored.voice } : {}) };
  }

  async isSent(key: string, index: number): Promise<boolean> {
    return (await this.redis.exists(this.sentKey(key, index))) === 1;
  }

  async markSent(key: string, index: number): Promise<void> {
    await this.redis.set(this.sentKey(key, index), '1', 'EX', DONE_TTL_SECONDS);
  }

  async countFailure(key: string): Promise<number> {
    const failures = await this.redis.incr(this.k('failures', key));
    await this.redis.expire(this.k('failures', key), DONE_TTL_SECONDS);
    return failures;
  }

  async backoffLeft(key: string): Promise<number> {
    return Math.max(0, await this.redis.pttl(this.k('retry', key)));
  }

  async setBackoff(key: string, ms: number): Promise<void> {
    await this.redis.set(this.k('retry', key), '1', 'PX', ms);
  }

  async finishHead(chat: string, key: string): Promise<void> {
    await this.redis
      .multi()
      .set(this.k('done', key), '1', 'EX', DONE_TTL_SECONDS)
      .del(this.k('item', key), this.k('failures', key), this.k('retry', key))
      .lrem(this.k('mailbox', chat), 1, key)
      .exec();
  }

  lock(chat: string): ReturnType<Mailbox['lock']> {
    return this.locks.tryAcquire(this.k('lock', chat));
  }
}
