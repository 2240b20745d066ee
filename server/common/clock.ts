/**
 * Port: the current time. Services that decide by time (session resets, idle expiry, retention) take a
 * Clock so tests can move time forward instead of sleeping.
 *
 * @example
 * const clock: Clock = SYSTEM_CLOCK;
 * if (clock.now().getTime() - session.lastActivityAt.getTime() > idleMs) …
 */
export interface Clock {
  now(): Date;
}

/** Wall-clock time. */
export const SYSTEM_CLOCK: Clock = { now: () => new Date() };
