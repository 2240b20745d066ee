import type { Ctx } from '../../common/ctx';
import type { SessionLocks } from './session-locks';
import type { TurnExecutor, TurnService } from './turn.service';

/** What one drain job achieved: the turns it ran, or `busy` when another worker holds the session. */
export type DrainOutcome = { status: 'done'; turns: number } | { status: 'busy' };

/**
 * Runs a session's turns, one worker at a time (DESIGN §2.3): takes the session's lock, answers its
 * pending messages oldest first until none is left, releases the lock. A job that finds the lock held
 * is `busy` and tried again later (the holder also sees its message). A worker that dies loses its lock
 * after the lock's time-to-live; messages it left PROCESSING are answered again by the next holder.
 */
export class TurnRunner {
  constructor(
    private readonly turns: TurnService,
    private readonly executor: TurnExecutor,
    private readonly locks: SessionLocks,
  ) {}

  /** One `turn.drain` job: drain the session under its lock. */
  async drain(ctx: Ctx, sessionId: string, signal: AbortSignal): Promise<DrainOutcome> {
    const lock = await this.locks.tryAcquire(sessionId);
    if (!lock) return { status: 'busy' };
    try {
      return { status: 'done', turns: await this.turns.drainSession(ctx, sessionId, this.executor, signal) };
    } finally {
      await lock.release();
    }
  }
}
