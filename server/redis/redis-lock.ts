import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { luaScript } from './lua-script';
import type { ProcessLiveness } from './process-liveness';

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
/** Replaces a dead holder's token with ours. KEYS: lock. ARGV: old token, new token, ttl. */
const TAKE_OVER = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) else return nil end`;
const release = luaScript('lock_release', 1, RELEASE);
const extend = luaScript('lock_extend', 1, EXTEND);
const takeOver = luaScript('lock_take_over', 1, TAKE_OVER);

/** A held lock; `lost` is set when renewal failed (another worker may own it now). */
export interface HeldLock {
  readonly key: string;
  lost: boolean;
  release(): Promise<void>;
}

/**
 * A Redis lock with an owner token and a TTL that is renewed while held, so a crashed holder frees it
 * after at most `ttlMs`. With `liveness`, the token names the holding process, and a lock whose holder's
 * heartbeat is gone is taken over at once. Used to run one session's turns (and one chat's deliveries) at
 * a time.
 */
export class RedisLock {
  constructor(
    private readonly redis: Redis,
    private readonly ttlMs: number,
    private readonly liveness?: ProcessLiveness,
  ) {}

  async tryAcquire(key: string): Promise<HeldLock | null> {
    const token = `${this.liveness?.id ?? '-'}|${randomUUID()}`;
    const ok = await this.redis.set(key, token, 'PX', this.ttlMs, 'NX');
    if (ok !== 'OK' && !(await this.takeOverFromDead(key, token))) return null;
    const held: HeldLock = {
      key,
      lost: false,
      release: async () => {
        clearInterval(timer);
        await release(this.redis, [key], [token]);
      },
    };
    const timer = setInterval(() => {
      extend(this.redis, [key], [token, String(this.ttlMs)]).then(
        (n) => {
          if (n === 0) held.lost = true;
        },
        () => undefined,
      );
    }, Math.max(200, Math.floor(this.ttlMs / 3)));
    timer.unref();
    return held;
  }

  private async takeOverFromDead(key: string, token: string): Promise<boolean> {
    if (!this.liveness) return false;
    const current = await this.redis.get(key);
    const holder = current?.split('|')[0];
    if (!current || !holder || holder === '-' || (await this.liveness.isAlive(holder))) return false;
    return (await takeOver(this.redis, [key], [current, token, String(this.ttlMs)])) === 'OK';
  }

  async isHeld(key: string): Promise<boolean> {
    return (await this.redis.exists(key)) === 1;
  }
}
