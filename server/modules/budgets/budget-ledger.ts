/** The period keys of one call: the ledger keeps a spent counter per user and day, and per user and month. */
export interface LedgerPeriods {
  day: string;
  month: string;
}

/** Limits in nano-USD (1e-9 USD); null: unlimited. */
export interface LedgerLimits {
  day: number | null;
  month: number | null;
}

/** The outcome of a reservation. */
export type ReserveResult =
  /** Held; spent so far (nano-USD) in the day and month, before this call. */
  | { kind: 'held'; day: number; month: number }
  /** The day's or month's spend plus what running calls hold already reaches the limit. */
  | { kind: 'exceeded'; period: 'day' | 'month'; day: number; month: number }
  /** The period's counter is not in the ledger yet: seed it from the usage table, then try again. */
  | { kind: 'unseeded' };

/**
 * Port: spent amounts and running holds per user, shared by every process (Redis). Amounts are integer
 * nano-USD, so adding them is exact. Every operation is atomic.
 */
export interface BudgetLedger {
  /**
   * Holds `amount` for `holdId` unless the user's spend plus what their running calls hold has already
   * reached a limit. Holds expire after `holdMs` (a process that died mid-call frees its hold).
   */
  reserve(userId: string, periods: LedgerPeriods, limits: LedgerLimits, holdId: string, amount: number, holdMs: number): Promise<ReserveResult>;
  /** Adds `amount` to the user's day and month (where their counters exist) and drops the hold; returns the new totals (null: not seeded). */
  settle(userId: string, periods: LedgerPeriods, holdId: string | null, amount: number): Promise<{ day: number | null; month: number | null }>;
  /** Drops a hold without charging. */
  release(userId: string, holdId: string): Promise<void>;
  /** Sets a period's counter unless it exists (another process may have seeded it first). */
  seed(userId: string, period: 'day' | 'month', key: string, amount: number): Promise<void>;
  /** The day's and month's counters (null where not seeded). */
  spent(userId: string, periods: LedgerPeriods): Promise<{ day: number | null; month: number | null }>;
  /** True the first time it is called for `flag` (until it expires): notices sent once per period. */
  once(userId: string, flag: string, ttlMs: number): Promise<boolean>;
}
