import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

/** A held lock; `lost` is set when renewal failed (another worker may own it now). */
export interface HeldLock {
  readonly key: string;
  lost: boolean;
  release(): Promise<void>;
}

/**
 * A Redis lock with an owner token and a TTL that is renewed while held, so a crashed holder frees it
 * after at most `ttlMs`. Used to run one session's turns (and one chat's deliveries) at a time.
 */
export class RedisLock {
  constructor(
    private readonly redis: Redis,
    private readonly ttlMs: number,
  ) {}

  async tryAcquire(key: string): Promise<HeldLock | null> {
    const token = randomUUID();
    const ok = await this.redis.set(key, token, 'PX', this.ttlMs, 'NX');
    if (ok !== 'OK') return null;
    const held: HeldLock = {
      key,
      lost: false,
      release: async () => {
        clearInterval(timer);
        await this.redis.eval(RELEASE, 1, key, token);
      },
    };
    const timer = setInterval(() => {
      this.redis.eval(EXTEND, 1, key, token, String(this.ttlMs)).then(
        (n) => {
          if (n === 0) held.lost = true;
        },
        () => undefined,
      );
    }, Math.max(200, Math.floor(this.ttlMs / 3)));
    timer.unref();
    return held;
  }

  async isHeld(key: string): Promise<boolean> {
    return (await this.redis.exists(key)) === 1;
  }
}
