import { randomUUID } from 'node:crypto';
import { luaScript } from '../server/redis/lua-script';
import type { QueueEnv } from './bull';

/**
 * Direct model calls: an interactive call runs in the process that asks for it, without a queue hop,
 * when its provider has a free slot and nothing waits in the provider's `model-calls` queue. Every call
 * of a provider, direct or queued, counts against `max_concurrency` across processes: direct calls hold
 * a leased member of the provider's slot set (renewed while the call runs, so a dead process frees its
 * slot after one lease), and a queued call that starts while direct calls fill the provider goes back to
 * the queue for a moment.
 */

/**
 * A direct slot, if the provider has room. KEYS: slots, active, wait, prioritized, rate limiter, meta
 * (the last five are the provider queue's). ARGV: now, lease ms, token, max concurrency. Refused while the
 * queue is rate limited or paused, while calls wait in it (they were first), or when direct and queued
 * calls running fill the provider.
 */
const TAKE_DIRECT = luaScript(
  'model_slot_take',
  6,
  `local now = tonumber(ARGV[1])
if redis.call('PTTL', KEYS[5]) > 0 then return 0 end
if redis.call('HEXISTS', KEYS[6], 'paused') == 1 then return 0 end
if redis.call('LLEN', KEYS[3]) > 0 or redis.call('ZCARD', KEYS[4]) > 0 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) + redis.call('LLEN', KEYS[2]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], 2 * tonumber(ARGV[2]))
return 1`,
);

/** Renews a held slot's lease (KEYS: slots; ARGV: now, lease ms, token); 0 when it was lost. */
const RENEW = luaScript(
  'model_slot_renew',
  1,
  `if not redis.call('ZSCORE', KEYS[1], ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], 2 * tonumber(ARGV[2]))
return 1`,
);

/**
 * Whether a queued call that has just become active may run: direct slots plus the queue's active calls
 * (itself included) within max. KEYS: slots, active. ARGV: now, max concurrency.
 */
const QUEUED_ROOM = luaScript(
  'model_slot_room',
  2,
  `redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]))
local n = redis.call('ZCARD', KEYS[1])
if n == 0 then return 1 end
if n + redis.call('LLEN', KEYS[2]) <= tonumber(ARGV[2]) then return 1 end
return 0`,
);

export interface DirectSlot {
  release(): Promise<void>;
}

export class ModelCallSlots {
  constructor(
    private readonly env: QueueEnv,
    private readonly leaseMs = 15_000,
  ) {}

  private slotsKey(provider: string): string {
    return `${this.env.prefix}:model:slots:${provider}`;
  }

  private queueKey(queue: string, part: string): string {
    return `${this.env.prefix}:bull:${queue}:${part}`;
  }

  /** A direct slot of `provider` (whose queue is `queue`), or null when the call must be queued. */
  async take(provider: string, queue: string, max: number): Promise<DirectSlot | null> {
    const token = randomUUID();
    const key = this.slotsKey(provider);
    const q = (part: string) => this.queueKey(queue, part);
    const ok = await TAKE_DIRECT(this.env.redis, [key, q('active'), q('wait'), q('prioritized'), q('limiter'), q('meta')], [Date.now(), this.leaseMs, token, max]);
    if (ok !== 1) return null;
    const timer = setInterval(() => void RENEW(this.env.redis, [key], [Date.now(), this.leaseMs, token]).catch(() => undefined), Math.floor(this.leaseMs / 3));
    timer.unref();
    return {
      release: async () => {
        clearInterval(timer);
        await this.env.redis.zrem(key, token).catch(() => undefined);
      },
    };
  }

  /** Whether a queued call that has just started may run now (false: direct calls fill the provider). */
  async queuedMayRun(provider: string, queue: string, max: number): Promise<boolean> {
    return (await QUEUED_ROOM(this.env.redis, [this.slotsKey(provider), this.queueKey(queue, 'active')], [Date.now(), max])) === 1;
  }
}
