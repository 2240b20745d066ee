import type { Redis } from 'ioredis';
import type { BudgetLedger, LedgerLimits, LedgerPeriods, ReserveResult } from '../modules/budgets';
import { luaScript } from './lua-script';

/** Counters outlive their period by a margin, so a late settle still finds them. */
const DAY_TTL_MS = 3 * 86_400_000;
const MONTH_TTL_MS = 40 * 86_400_000;

// KEYS: day counter, month counter, holds hash. ARGV: hold id, amount, now (ms), hold ms, day limit, month limit (-1: none).
// Holds are "amount|expiresAt" fields of one hash per user; expired ones are dropped on the way.
const RESERVE = luaScript(
  'budget_reserve',
  3,
  `
local day = redis.call('GET', KEYS[1])
local month = redis.call('GET', KEYS[2])
if not day or not month then return {-1, 0, 0} end
day = tonumber(day)
month = tonumber(month)
local now = tonumber(ARGV[3])
local held = 0
local holds = redis.call('HGETALL', KEYS[3])
for i = 1, #holds, 2 do
  local sep = string.find(holds[i + 1], '|', 1, true)
  local amount = tonumber(string.sub(holds[i + 1], 1, sep - 1))
  if tonumber(string.sub(holds[i + 1], sep + 1)) <= now then
    redis.call('HDEL', KEYS[3], holds[i])
  else
    held = held + amount
  end
end
local dayLimit = tonumber(ARGV[5])
local monthLimit = tonumber(ARGV[6])
if dayLimit >= 0 and day + held >= dayLimit then return {1, day, month} end
if monthLimit >= 0 and month + held >= monthLimit then return {2, day, month} end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2] .. '|' .. (now + tonumber(ARGV[4])))
redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[4]) * 2)
return {0, day, month}
`,
);

// KEYS: day counter, month counter, holds hash. ARGV: hold id ('' for none), amount.
// A counter that is not there is left alone: it is seeded from the usage table, which has this call too.
const SETTLE = luaScript(
  'budget_settle',
  3,
  `
if ARGV[1] ~= '' then redis.call('HDEL', KEYS[3], ARGV[1]) end
local out = {-1, -1}
for i = 1, 2 do
  if redis.call('EXISTS', KEYS[i]) == 1 then out[i] = redis.call('INCRBY', KEYS[i], ARGV[2]) end
end
return out
`,
);

/**
 * The budget ledger on Redis (keys `<prefix>:budget:{<userId>}:…`, one hash tag per user): spent
 * nano-USD per day and month, and the estimates held by running calls. Reserving checks and holds in
 * one Lua script, so concurrent calls on any number of processes see each other's holds.
 */
export class RedisBudgetLedger implements BudgetLedger {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(userId: string, rest: string): string {
    return `${this.prefix}:budget:{${userId}}:${rest}`;
  }

  private keys(userId: string, periods: LedgerPeriods): string[] {
    return [this.key(userId, `d:${periods.day}`), this.key(userId, `m:${periods.month}`), this.key(userId, 'holds')];
  }

  async reserve(userId: string, periods: LedgerPeriods, limits: LedgerLimits, holdId: string, amount: number, holdMs: number): Promise<ReserveResult> {
    const [code, day, month] = (await RESERVE(this.redis, this.keys(userId, periods), [holdId, amount, Date.now(), holdMs, limits.day ?? -1, limits.month ?? -1])) as [number, number, number];
    if (code === -1) return { kind: 'unseeded' };
    if (code === 0) return { kind: 'held', day, month };
    return { kind: 'exceeded', period: code === 1 ? 'day' : 'month', day, month };
  }

  async settle(userId: string, periods: LedgerPeriods, holdId: string | null, amount: number): Promise<{ day: number | null; month: number | null }> {
    const [day, month] = (await SETTLE(this.redis, this.keys(userId, periods), [holdId ?? '', amount])) as [number, number];
    return { day: day < 0 ? null : day, month: month < 0 ? null : month };
  }

  async release(userId: string, holdId: string): Promise<void> {
    await this.redis.hdel(this.key(userId, 'holds'), holdId);
  }

  async seed(userId: string, period: 'day' | 'month', key: string, amount: number): Promise<void> {
    await this.redis.set(this.key(userId, `${period === 'day' ? 'd' : 'm'}:${key}`), String(amount), 'PX', period === 'day' ? DAY_TTL_MS : MONTH_TTL_MS, 'NX');
  }

  async spent(userId: string, periods: LedgerPeriods): Promise<{ day: number | null; month: number | null }> {
    const [day, month] = await this.redis.mget(this.key(userId, `d:${periods.day}`), this.key(userId, `m:${periods.month}`));
    return { day: day === null ? null : Number(day), month: month === null ? null : Number(month) };
  }

  async once(userId: string, flag: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.key(userId, `once:${flag}`), '1', 'PX', ttlMs, 'NX')) === 'OK';
  }
}
