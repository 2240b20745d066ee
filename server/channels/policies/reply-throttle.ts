import type { Redis } from 'ioredis';

/** Port: "has this been said within the window?" — so repeated refusals are answered once. */
export interface ReplyThrottle {
  /** True the first time `key` is seen within `ttlMs` (the caller answers), false afterwards. */
  first(key: string, ttlMs: number): Promise<boolean>;
}

/** {@link ReplyThrottle} on Redis (`SET NX PX`), shared by every process of a deployment. */
export class RedisReplyThrottle implements ReplyThrottle {
  constructor(
    private readonly redis: Redis,
    /** Key prefix, e.g. `muninn:reply-once`. */
    private readonly prefix: string,
  ) {}

  async first(key: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(`${this.prefix}:${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK';
  }
}
