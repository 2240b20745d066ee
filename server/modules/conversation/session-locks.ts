/** A held session lock; `lost` is set when renewing it failed (another worker may own it now). */
export interface HeldSessionLock {
  readonly lost: boolean;
  release(): Promise<void>;
}

/**
 * Port: one lock per session, held while its turns run (and by work that must not overlap a turn, such
 * as a requested compaction). A crashed holder frees it after the lock's time-to-live. The Redis
 * implementation lives in server/redis/.
 */
export interface SessionLocks {
  tryAcquire(sessionId: string): Promise<HeldSessionLock | null>;
  isHeld(sessionId: string): Promise<boolean>;
}

/**
 * Runs `fn` under the session's lock; null when someone else holds it (for longer than `waitMs`, when
 * given: a holder that is only finishing up releases it within moments).
 */
export async function withSessionLock<T>(locks: SessionLocks, sessionId: string, fn: () => Promise<T>, waitMs = 0): Promise<{ value: T } | null> {
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
    await held.release();
  }
}
