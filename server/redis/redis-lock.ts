import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { luaScript, type LuaScript } from './lua-script';
import type { ProcessLiveness } from './process-liveness';

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
/** Releases like RELEASE and takes the lock's mark in the same step. KEYS: lock, mark. ARGV: token. Returns 1 when marked. */
const RELEASE_MARKED = `if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('del', KEYS[1]) end
if redis.call('del', KEYS[2]) == 1 then return 1 else return 0 end`;
/**
 * Marks a lock whose holder lives. KEYS: lock, mark. ARGV: mark ttl (ms), the liveness key prefix ('' without
 * liveness). Returns 1 when marked; 0 when the lock is free or its holder's process is dead (its heartbeat
 * key, named after the token's first part, is gone), so the caller hands the work on instead. The
 * heartbeat key is not among KEYS: Muninn's Redis is one node, not a cluster.
 */
const MARK_IF_HELD = `local token = redis.call('get', KEYS[1])
if not token then return 0 end
local holder = string.match(token, '^([^|]*)|')
if ARGV[2] ~= '' and holder and holder ~= '-' and redis.call('exists', ARGV[2] .. holder) == 0 then return 0 end
redis.call('set', KEYS[2], '1', 'PX', ARGV[1])
return 1`;
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
/** Replaces a dead holder's token with ours. KEYS: lock. ARGV: old token, new token, ttl. */
const TAKE_OVER = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) else return nil end`;
const release = luaScript('lock_release', 1, RELEASE);
const releaseMarked = luaScript('lock_release_marked', 2, RELEASE_MARKED);
const markIfHeld = luaScript('lock_mark_if_held', 2, MARK_IF_HELD);
/** The script by its number of keys, made once per number (a lock takes it on every message). */
const takeIfIdleScripts = new Map<number, LuaScript>();
const takeIfIdle = (keys: number): LuaScript => {
  let script = takeIfIdleScripts.get(keys);
  if (!script) takeIfIdleScripts.set(keys, (script = luaScript(`lock_take_if_idle_${keys}`, keys, TAKE_IF_IDLE)));
  return script;
};
const extend = luaScript('lock_extend', 1, EXTEND);
const takeOver = luaScript('lock_take_over', 1, TAKE_OVER);

/**
 * Takes a free lock unless work waits in line: KEYS: lock, then lists and sorted sets that must be empty
 * (a queue's waiting jobs). ARGV: token, ttl. Returns 1 when taken, 0 when the lock is held, -1 when
 * something waits.
 */
const TAKE_IF_IDLE = `for i = 2, #KEYS do
  local kind = redis.call('type', KEYS[i]).ok
  if (kind == 'list' and redis.call('llen', KEYS[i]) > 0) or (kind == 'zset' and redis.call('zcard', KEYS[i]) > 0) then return -1 end
end
if redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
return 0`;

/** How long a mark outlives a holder that never released (a dead process): a day. */
const MARK_TTL_MS = 86_400_000;

/** A held lock; `lost` is set when renewal failed (another worker may own it now). */
export interface HeldLock {
  readonly key: string;
  lost: boolean;
  /** Frees the lock; true when it was marked meanwhile (only with a mark key, see `markIfHeld`). */
  release(): Promise<boolean>;
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

  /**
   * Takes the lock when it is free (or its holder's process is dead). With `markKey`, whoever finds the
   * lock held may mark it (`markIfHeld`), and `release` tells the holder so. With `idleKeys` (lists or
   * sorted sets, such as a queue's waiting jobs), the lock is not taken while any of them holds something.
   */
  async tryAcquire(key: string, markKey?: string, idleKeys: readonly string[] = []): Promise<HeldLock | null> {
    const token = this.newToken();
    const taken = idleKeys.length
      ? Number(await takeIfIdle(idleKeys.length + 1)(this.redis, [key, ...idleKeys], [token, String(this.ttlMs)]))
      : (await this.redis.set(key, token, 'PX', this.ttlMs, 'NX')) === 'OK'
        ? 1
        : 0;
    if (taken === -1 || (taken === 0 && !(await this.takeOverFromDead(key, token)))) return null;
    return this.hold(key, token, markKey);
  }

  /**
   * Takes a free lock with `take`, a script that sets the lock to `token` for `ttlMs` (SET NX PX) and
   * reads what the holder needs in the same round trip; it resolves to null when the lock was held. A
   * lock whose holder's process is dead is taken over; `value` is then null and the caller reads itself.
   */
  async tryAcquireWith<T>(key: string, take: (token: string, ttlMs: number) => Promise<T | null>): Promise<{ lock: HeldLock; value: T | null } | null> {
    const token = this.newToken();
    const value = await take(token, this.ttlMs);
    if (value === null && !(await this.takeOverFromDead(key, token))) return null;
    return { lock: this.hold(key, token), value };
  }

  private newToken(): string {
    return `${this.liveness?.id ?? '-'}|${randomUUID()}`;
  }

  /** The handle of a lock just taken with `token`: renewed every third of its TTL until released. */
  private hold(key: string, token: string, markKey?: string): HeldLock {
    const held: HeldLock = {
      key,
      lost: false,
      release: async () => {
        clearInterval(timer);
        if (markKey) return (await releaseMarked(this.redis, [key, markKey], [token])) === 1;
        await release(this.redis, [key], [token]);
        return false;
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

  /** Marks the lock for its holder when it is held by a live process (see `tryAcquire`); false otherwise. */
  async markIfHeld(key: string, markKey: string): Promise<boolean> {
    return (await markIfHeld(this.redis, [key, markKey], [String(MARK_TTL_MS), this.liveness?.keyPrefix ?? ''])) === 1;
  }

  async isHeld(key: string): Promise<boolean> {
    return (await this.redis.exists(key)) === 1;
  }
}
