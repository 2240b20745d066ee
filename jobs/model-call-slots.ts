import { randomUUID } from 'node:crypto';
import { luaScript } from '../server/redis/lua-script';
import type { ProcessIdentity, QueueEnv } from './bull';

/**
 * Direct model calls: an interactive call runs in the process that asks for it, without a queue hop,
 * when its provider has a free slot and nothing waits in the provider's `model-calls` queue. Every call
 * of a provider, direct or queued, counts against `max_concurrency` across processes: direct calls hold
 * a leased member of the provider's slot set (renewed while the call runs; a dead process's slots are
 * freed as soon as a full provider is looked at, or after one lease without liveness), and a queued call
 * that starts while direct calls fill the provider goes back to the queue for a moment.
 */

/**
 * A direct slot, if the provider has room. KEYS: slots, active, wait, prioritized, rate limiter, meta
 * (these five are the provider queue's), interactive mark. ARGV: now, lease ms, token, max concurrency,
 * mark ttl ms. Refused while the queue is rate limited or paused, while calls wait in it (they were
 * first), or when direct and queued calls running fill the provider. A slot taken marks the provider as
 * serving an interactive call (background calls wait for their grace period after it).
 */
const TAKE_DIRECT = luaScript(
  'model_slot_take',
  7,
  `local now = tonumber(ARGV[1])
if redis.call('PTTL', KEYS[5]) > 0 then return 0 end
if redis.call('HEXISTS', KEYS[6], 'paused') == 1 then return 0 end
if redis.call('LLEN', KEYS[3]) > 0 or redis.call('ZCARD', KEYS[4]) > 0 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) + redis.call('LLEN', KEYS[2]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], 2 * tonumber(ARGV[2]))
redis.call('SET', KEYS[7], ARGV[1], 'PX', ARGV[5])
return 1`,
);

/** Frees a slot (KEYS: slots, interactive mark; ARGV: token, now, mark ttl ms) and marks the provider again. */
const RELEASE = luaScript(
  'model_slot_release',
  2,
  `redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
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

/** Where a provider's interactive mark lives (RedisInteractiveMarks). */
export interface InteractiveMarkKeys {
  key(provider: string): string;
  readonly ttlMs: number;
}

export class ModelCallSlots {
  constructor(
    private readonly env: QueueEnv,
    private readonly marks: InteractiveMarkKeys,
    private readonly liveness?: ProcessIdentity,
    private readonly leaseMs = 15_000,
  ) {}

  /** When each provider's slots were last checked for dead holders (at most once a second). */
  private readonly lastSweep = new Map<string, number>();

  /** Frees the slots of holders that are no longer alive; true when it freed any. */
  private async sweepDead(provider: string): Promise<boolean> {
    if (!this.liveness || (this.lastSweep.get(provider) ?? 0) > Date.now() - 1000) return false;
    this.lastSweep.set(provider, Date.now());
    const key = this.slotsKey(provider);
    let freed = false;
    for (const member of await this.env.redis.zrange(key, 0, -1)) {
      const holder = member.split('|')[0]!;
      if (!holder || holder === this.liveness.id || (await this.liveness.isAlive(holder))) continue;
      freed = (await this.env.redis.zrem(key, member)) > 0 || freed;
    }
    return freed;
  }

  private slotsKey(provider: string): string {
    return `${this.env.prefix}:model:slots:${provider}`;
  }

  private queueKey(queue: string, part: string): string {
    return `${this.env.prefix}:bull:${queue}:${part}`;
  }

  /**
   * A direct slot of `provider` (whose queue is `queue`), or null when the call must be queued. Taking
   * and releasing it mark the provider's interactive use, as `ModelCallService.execute` does otherwise.
   */
  async take(provider: string, queue: string, max: number): Promise<DirectSlot | null> {
    const token = `${this.liveness?.id ?? ''}|${randomUUID()}`;
    const key = this.slotsKey(provider);
    const mark = this.marks.key(provider);
    const q = (part: string) => this.queueKey(queue, part);
    const attempt = () => TAKE_DIRECT(this.env.redis, [key, q('active'), q('wait'), q('prioritized'), q('limiter'), q('meta'), mark], [Date.now(), this.leaseMs, token, max, this.marks.ttlMs]);
    if ((await attempt()) !== 1 && !((await this.sweepDead(provider)) && (await attempt()) === 1)) return null;
    const timer = setInterval(() => void RENEW(this.env.redis, [key], [Date.now(), this.leaseMs, token]).catch(() => undefined), Math.floor(this.leaseMs / 3));
    timer.unref();
    return {
      release: async () => {
        clearInterval(timer);
        // A slot not freed (Redis unreachable) frees itself when its lease ends.
        await RELEASE(this.env.redis, [key, mark], [token, Date.now(), this.marks.ttlMs]).catch(() => undefined);
      },
    };
  }

  /** Whether a queued call that has just started may run now (false: direct calls fill the provider). */
  async queuedMayRun(provider: string, queue: string, max: number): Promise<boolean> {
    const room = () => QUEUED_ROOM(this.env.redis, [this.slotsKey(provider), this.queueKey(queue, 'active')], [Date.now(), max]);
    return (await room()) === 1 || ((await this.sweepDead(provider)) && (await room()) === 1);
  }
}
