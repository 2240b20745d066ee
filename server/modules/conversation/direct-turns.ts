import { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import type { RunningTurns } from './running-turns';
import type { HeldSessionLock, SessionLocks } from './session-locks';
import type { ClaimedTurn, TurnJobs, TurnReservation } from './turn-scheduler';
import type { DrainOutcome } from './turn-runner';

/** Longest a message waits for a local drain of its session that is only finishing (see `finishing`). */
const FINISHING_WAIT_MS = 50;

/** What runs a session's turns under a lock someone else took: the `TurnRunner`. */
export interface HeldDrains {
  runClaimed(ctx: Ctx, claimed: ClaimedTurn, lock: HeldSessionLock, signal: AbortSignal): Promise<DrainOutcome>;
  drainHeld(ctx: Ctx, sessionId: string, lock: HeldSessionLock, signal: AbortSignal): Promise<DrainOutcome>;
}

/**
 * Turns answered in the process that stored their message, without a hop through the turns queue, while
 * this process runs turn workers, fewer than `turn_concurrency` turns run in it, and no drain waits in the
 * queue (so a message never passes sessions queued before it).
 * The session's lock is the same one queued drains take, so a session's turns never overlap whichever way
 * they run, and the messages are rows in the database either way: a process that dies mid-turn leaves its
 * messages PROCESSING and its lock to expire (or be taken over), and they are answered again by the
 * sweep of stale pending sessions (`TurnService.recoverStale`) or at the next start. A drain that leaves
 * messages behind, or fails, hands the session to the turns queue.
 */
export class DirectTurns {
  private runner: HeldDrains | null = null;
  private slots = 0;
  /** Reservations taken and not yet finished. */
  private active = 0;
  private readonly running = new Set<Promise<void>>();
  /** The drains running here, by session. */
  private readonly bySession = new Map<string, Promise<void>>();
  private readonly stop = new AbortController();

  constructor(
    private readonly jobs: TurnJobs,
    private readonly locks: SessionLocks,
    private readonly turns: RunningTurns,
    private readonly logger: Logger,
  ) {}

  /** Starts answering at once in this process (roles that run turn workers), up to `slots` at a time. */
  attach(runner: HeldDrains, slots: number): void {
    this.runner = runner;
    this.slots = slots;
  }

  async reserve(sessionId: string): Promise<TurnReservation | null> {
    await this.finishing(sessionId);
    return this.take(sessionId);
  }

  private async take(sessionId: string): Promise<TurnReservation | null> {
    const runner = this.runner;
    // `turn_concurrency` bounds the turns of this process whichever way they came (queued ones too).
    if (!runner || this.stop.signal.aborted || this.active >= this.slots || this.turns.size >= this.slots) return null;
    this.active++;
    let lock: HeldSessionLock | null = null;
    try {
      lock = await this.locks.tryAcquire(sessionId, { unlessQueued: true });
    } finally {
      if (!lock) this.active--;
    }
    if (!lock) return null;
    const held = lock;
    const start = (what: (ctx: Ctx, signal: AbortSignal) => Promise<DrainOutcome>) => this.track(sessionId, what);
    return {
      run: (claimed) => start((ctx, signal) => runner.runClaimed(ctx, claimed, held, signal)),
      drain: () => start((ctx, signal) => runner.drainHeld(ctx, sessionId, held, signal)),
      cancel: async () => {
        this.active--;
        // A message stored for the session meanwhile was left to this holder.
        if (await held.release()) await this.jobs.schedule(sessionId, '');
      },
    };
  }

  /**
   * A drain of the session that runs here and whose turn has ended is only finishing (chores, letting the
   * lock go): the sender's next message, sent as soon as the reply arrived, waits for it (briefly), so it
   * is answered at once rather than left to that drain.
   */
  private async finishing(sessionId: string): Promise<void> {
    const drain = this.bySession.get(sessionId);
    if (!drain || this.turns.has(sessionId)) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([drain, new Promise((resolve) => (timer = setTimeout(resolve, FINISHING_WAIT_MS)))]);
    clearTimeout(timer);
  }

  private track(sessionId: string, what: (ctx: Ctx, signal: AbortSignal) => Promise<DrainOutcome>): void {
    const ctx = Ctx.system(this.logger, 'turn');
    // A signal of its own that follows the shutdown one: whatever listens on it goes with this drain.
    const own = new AbortController();
    const follow = () => own.abort(this.stop.signal.reason);
    this.stop.signal.addEventListener('abort', follow, { once: true });
    const done = what(ctx, own.signal)
      .then(
        (outcome) => (outcome.status === 'done' && outcome.more ? this.again(sessionId) : undefined),
        (err: Error) => {
          // The drain let the lock go itself; the queue tries the session again (with its back-off).
          this.logger.warn({ sessionId, err: err.message }, 'turn failed to run here: handing the session to the turn queue');
          return this.jobs.schedule(sessionId, '');
        },
      )
      .catch((err: Error) => this.logger.error({ sessionId, err: err.message }, 'could not hand a session on; the stale-session sweep will'))
      .finally(() => {
        this.stop.signal.removeEventListener('abort', follow);
        this.active--;
        this.running.delete(done);
        if (this.bySession.get(sessionId) === done) this.bySession.delete(sessionId);
      });
    this.running.add(done);
    this.bySession.set(sessionId, done);
  }

  /**
   * Messages are left after a drain (or came while it ran, often the sender's next one, sent as soon as
   * the reply arrived): drained here again when the session is free, else left to its new holder.
   */
  private async again(sessionId: string): Promise<void> {
    const next = await this.take(sessionId);
    if (next) return next.drain();
    if (!(await this.locks.markIfHeld(sessionId))) await this.jobs.schedule(sessionId, '');
  }

  /**
   * Takes no more turns and waits for the running ones; `abort` (shutdown past its time) stops them, which
   * leaves their messages pending for the next start or another process.
   */
  async close(): Promise<void> {
    this.runner = null;
    await Promise.all([...this.running]);
  }

  /** Stops the running turns at once (their messages stay pending). */
  abort(reason: string): void {
    this.stop.abort(new Error(reason));
  }
}
