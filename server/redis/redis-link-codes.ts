import type { Redis } from 'ioredis';
import type { LinkCodeStore } from '../modules/linking';

/**
 * Link codes on Redis: `<prefix>:link:code:<CODE>` → user id and `<prefix>:link:user:<id>` → the user's
 * current code (so a new code replaces the old one), both expiring; wrong codes per sender counted in
 * `<prefix>:link:fail:<channel>:<handle>`. GETDEL makes a code work once even with two processes.
 */
export class RedisLinkCodes implements LinkCodeStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async put(code: string, userId: string, ttlSeconds: number): Promise<void> {
    const userKey = `${this.prefix}:link:user:${userId}`;
    const previous = await this.redis.get(userKey);
    const tx = this.redis.multi();
    if (previous) tx.del(`${this.prefix}:link:code:${previous}`);
    tx.set(`${this.prefix}:link:code:${code}`, userId, 'EX', ttlSeconds).set(userKey, code, 'EX', ttlSeconds);
    await tx.exec();
  }

  async take(code: string): Promise<string | null> {
    const userId = await this.redis.getdel(`${this.prefix}:link:code:${code}`);
    if (userId) await this.redis.del(`${this.prefix}:link:user:${userId}`);
    return userId;
  }

  async countFailure(sender: string, windowSeconds: number): Promise<number> {
    const key = `${this.prefix}:link:fail:${sender}`;
    const [[, count]] = (await this.redis.multi().incr(key).expire(key, windowSeconds, 'NX').exec()) as [[null, number]];
    return count;
  }

  async failures(sender: string): Promise<number> {
    return Number((await this.redis.get(`${this.prefix}:link:fail:${sender}`)) ?? 0);
  }
}
