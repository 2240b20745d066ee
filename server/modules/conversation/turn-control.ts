import type { RunningTurns } from './running-turns';
import type { SessionLocks } from './session-locks';
import type { AbortRequest, TurnAbortBus, TurnJobs, TurnScheduler } from './turn-scheduler';

/**
 * The `TurnScheduler` the services use: schedules a session's drain on the turns queue, aborts a
 * running turn wherever it runs (abort requests reach every worker process), tells whether one runs
 * (its session lock is held).
 */
export class TurnControl implements TurnScheduler {
  constructor(
    private readonly jobs: TurnJobs,
    private readonly aborts: TurnAbortBus,
    private readonly locks: SessionLocks,
  ) {}

  schedule(sessionId: string, messageId = ''): Promise<void> {
    return this.jobs.schedule(sessionId, messageId);
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
