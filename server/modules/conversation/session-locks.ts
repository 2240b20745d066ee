/** A held session lock; `lost` is set when renewing it failed (another worker may own it now). */
export interface HeldSessionLock {
  readonly lost: boolean;
  /**
   * Frees the session; resolves true when a message was stored for it while the lock was held (see
   * `SessionLocks.markIfHeld`): the holder then makes sure the session is drained again.
   */
  release(): Promise<boolean>;
}

/**
 * Port: one lock per session, held while its turns run (and by work that must not overlap a turn, such
 * as a requested compaction). A crashed holder frees it after the lock's time-to-live. The Redis
 * implementation lives in server/redis/.
 */
export interface SessionLocks {
  /**
   * Takes the session's lock when it is free (or its holder died). `unlessQueued`: not while the turns
   * queue has drains waiting, so a message answered at once never passes sessions queued before it.
   */
  tryAcquire(sessionId: string, options?: { unlessQueued?: boolean }): Promise<HeldSessionLock | null>;
  isHeld(sessionId: string): Promise<boolean>;
  /**
   * When the session is locked, marks it for its holder (whose `release` then resolves true) and
   * resolves true; resolves false when nobody holds it. Checking and marking are one step, so a mark is
   * never left behind by a holder that has just released.
   */
  markIfHeld(sessionId: string): Promise<boolean>;
}

/**
 * Runs `fn` under the session's lock; null when someone else holds it (for longer than `waitMs`, when
 * given: a holder that is only finishing up releases it within moments). A message stored meanwhile was
 * left to this holder (`markIfHeld`), so `drainLater` hands the session to the turn queue then.
 */
export async function withSessionLock<T>(
  locks: SessionLocks,
  sessionId: string,
  fn: () => Promise<T>,
  waitMs = 0,
  drainLater: (sessionId: string) => Promise<void> = async () => undefined,
): Promise<{ value: T } | null> {
  const deadline = Date.now() + waitMs;
  let held = await locks.tryAcquire(sessionId);
  while (!held && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    held = await locks.tryAcquire(sessionId);
  }
  if (!held) return null;
  try {
    return { value: await fn() };
  } finally {
    if (await held.release()) await drainLater(sessionId);
  }
}
