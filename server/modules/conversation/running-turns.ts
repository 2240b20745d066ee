/**
 * The turns running in this process, by session, so an abort request (from `/stop`, `stopTurn` or an
 * `interrupt` message, possibly sent to another process) can reach the right AbortController.
 */
export class RunningTurns {
  private readonly running = new Map<string, { turnId: string; controller: AbortController }>();

  /** Registers a turn; its controller follows `parent` (the job's signal). */
  begin(sessionId: string, turnId: string, parent?: AbortSignal): AbortController {
    const controller = new AbortController();
    if (parent) {
      if (parent.aborted) controller.abort(parent.reason);
      else parent.addEventListener('abort', () => controller.abort(parent.reason), { once: true });
    }
    this.running.set(sessionId, { turnId, controller });
    return controller;
  }

  end(sessionId: string, turnId: string): void {
    if (this.running.get(sessionId)?.turnId === turnId) this.running.delete(sessionId);
  }

  /** Aborts the session's running turn in this process; true when there was one. */
  abort(sessionId: string, reason: string): boolean {
    const entry = this.running.get(sessionId);
    if (!entry) return false;
    entry.controller.abort(new TurnAbortedError(reason));
    return true;
  }

  get size(): number {
    return this.running.size;
  }
}

/** The reason a turn was aborted: `/stop`, `stopTurn`, a newer message in `interrupt` mode, shutdown. */
export class TurnAbortedError extends Error {
  constructor(readonly reason: string) {
    super(`Turn aborted: ${reason}`);
    this.name = 'TurnAbortedError';
  }
}
