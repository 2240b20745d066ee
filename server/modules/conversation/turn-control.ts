import type { RunningTurns } from './running-turns';
import type { SessionLocks } from './session-locks';
import type { AbortRequest, TurnAbortBus, TurnJobs, TurnReservation, TurnScheduler } from './turn-scheduler';
import type { DirectTurns } from './direct-turns';

/**
 * The `TurnScheduler` the services use: leaves a session being answered to its holder (which drains it
 * again when it lets go) and schedules any other on the turns queue, aborts a running turn wherever it
 * runs (abort requests reach every worker process), tells whether one runs (its session lock is held).
 */
export class TurnControl implements TurnScheduler {
  constructor(
    private readonly jobs: TurnJobs,
    private readonly aborts: TurnAbortBus,
    private readonly locks: SessionLocks,
    /** Turns answered where their message was stored (worker roles attach a runner to it). */
    readonly direct: DirectTurns | null = null,
  ) {}

  reserve(sessionId: string): Promise<TurnReservation | null> {
    return this.direct ? this.direct.reserve(sessionId) : Promise.resolve(null);
  }

  async schedule(sessionId: string, messageId = ''): Promise<void> {
    if (await this.locks.markIfHeld(sessionId)) return;
    // Let go of just now (the holder was finishing): drained here when this process can.
    const reserved = await this.reserve(sessionId);
    if (reserved) return reserved.drain();
    await this.jobs.schedule(sessionId, messageId);
  }

  async requestAbort(sessionId: string, reason: string, beforeMessageId?: string): Promise<boolean> {
    const running = await this.isRunning(sessionId);
    await this.aborts.publish({ sessionId, reason, beforeMessageId });
    return running;
  }

  isRunning(sessionId: string): Promise<boolean> {
    return this.locks.isHeld(sessionId);
  }

  /** Aborts this process's turns named by requests from anywhere (worker roles); returns the stop function. */
  listen(running: RunningTurns, onAborted?: (req: AbortRequest) => void): Promise<() => Promise<void>> {
    return this.aborts.listen((req) => {
      if (running.abort(req.sessionId, req.reason, req.beforeMessageId)) onAborted?.(req);
    });
  }
}
