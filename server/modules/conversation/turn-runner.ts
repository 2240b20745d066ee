import type { Ctx } from '../../common/ctx';
import type { HeldSessionLock, SessionLocks } from './session-locks';
import type { ClaimedTurn } from './turn-scheduler';
import type { DrainResult, TurnExecutor, TurnService } from './turn.service';

/**
 * Port: work that must not overlap a turn, done right after a drain while the session is still held and
 * only when no message is pending: a chore that has work asks `stillPending` (read once per drain, so a
 * drain whose chores have nothing to do reads nothing) and leaves its work for a later drain when it is.
 */
export interface SessionChores {
  afterDrain(ctx: Ctx, sessionId: string, stillPending: () => Promise<boolean>): Promise<void>;
}

/**
 * What one drain job achieved: the turns it ran and whether the session still has pending messages (its
 * next turn goes to the back of the queue), or `busy` when another worker holds the session.
 */
export type DrainOutcome = { status: 'done'; turns: number; more: boolean } | { status: 'busy' };

/**
 * Runs a session's turns, one worker at a time (DESIGN §2.3): takes the session's lock, answers its
 * oldest pending message (`turnsPerDrain`, default 1, so a busy session does not keep a worker from
 * the others: its next turn is scheduled behind them) and releases the lock. `more` asks for another
 * drain only for messages that were already waiting when this one looked: a message stored later was
 * scheduled by its sender, and the turn queue keeps that job for after the running one (one drain job
 * per session runs at a time). The chores run once nothing is pending (each asks when it has work). A job that finds the lock held is
 * `busy` (the holder sees its message). A worker that dies loses its lock after the lock's time-to-live;
 * messages it left PROCESSING are answered again by the next holder.
 */
export class TurnRunner {
  constructor(
    private readonly turns: TurnService,
    private readonly executor: TurnExecutor,
    private readonly locks: SessionLocks,
    private readonly chores: SessionChores[] = [],
    private readonly turnsPerDrain = 1,
  ) {}

  /** One `turn.drain` job: drain the session under its lock. */
  async drain(ctx: Ctx, sessionId: string, signal: AbortSignal): Promise<DrainOutcome> {
    const lock = await this.locks.tryAcquire(sessionId);
    if (!lock) return { status: 'busy' };
    return this.drainHeld(ctx, sessionId, lock, signal);
  }

  /** Drains the session under a lock the caller took (`TurnScheduler.reserve`); lets it go after. */
  drainHeld(ctx: Ctx, sessionId: string, lock: HeldSessionLock, signal: AbortSignal): Promise<DrainOutcome> {
    return this.underLock(ctx, sessionId, lock, signal, () => this.turns.drainSession(ctx, sessionId, this.executor, signal, this.turnsPerDrain));
  }

  /** Answers a message stored under the caller's lock (`TurnScheduler.reserve`), then as a drain would. */
  runClaimed(ctx: Ctx, claimed: ClaimedTurn, lock: HeldSessionLock, signal: AbortSignal): Promise<DrainOutcome> {
    return this.underLock(ctx, claimed.session.id, lock, signal, () => this.turns.runClaimed(ctx, claimed, this.executor, signal));
  }

  /**
   * Runs `turns`, then the chores when nothing is pending, and lets the session go. A message stored
   * meanwhile was left to this holder (the lock's mark), so it counts as `more` even when the drain was
   * stopped (shutdown): the turn queue then has the session.
   */
  private async underLock(ctx: Ctx, sessionId: string, lock: HeldSessionLock, signal: AbortSignal, turns: () => Promise<DrainResult>): Promise<DrainOutcome> {
    let ran = 0;
    let more = false;
    let marked = false;
    try {
      const drained = await turns();
      ran = drained.turns;
      more = drained.left > 0;
      if (!more) {
        let pending: Promise<boolean> | null = null;
        const stillPending = () => (pending ??= this.turns.hasPending(ctx, sessionId));
        for (const chore of this.chores) if (!lock.lost && !signal.aborted) await chore.afterDrain(ctx, sessionId, stillPending);
      }
    } finally {
      marked = await lock.release();
    }
    return { status: 'done', turns: ran, more: (more && !signal.aborted) || marked };
  }
}
