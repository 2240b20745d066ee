/**
 * The turns running in this process, by session, so an abort request (from `/stop`, `stopTurn` or an
 * `interrupt` message, possibly sent to another process) can reach the right AbortController.
 */
export class RunningTurns {
  private readonly running = new Map<string, { turnId: string; lastMessageId: string; controller: AbortController; detach: () => void }>();

  /** Registers a turn answering messages up to `lastMessageId`; its controller follows `parent` (the job's signal). */
  begin(sessionId: string, turnId: string, lastMessageId: string, parent?: AbortSignal): AbortController {
    const controller = new AbortController();
    let detach = () => undefined as void;
    if (parent) {
      const follow = () => controller.abort(parent.reason);
      if (parent.aborted) follow();
      else {
        parent.addEventListener('abort', follow, { once: true });
        detach = () => parent.removeEventListener('abort', follow);
      }
    }
    this.running.set(sessionId, { turnId, lastMessageId, controller, detach });
    return controller;
  }

  end(sessionId: string, turnId: string): void {
    const entry = this.running.get(sessionId);
    if (entry?.turnId !== turnId) return;
    entry.detach();
    this.running.delete(sessionId);
  }

  /**
   * Aborts the session's running turn in this process; true when there was one. With `beforeMessageId`
   * (interrupt mode) only a turn for older messages is aborted, never the one answering that message.
   */
  abort(sessionId: string, reason: string, beforeMessageId?: string): boolean {
    const entry = this.running.get(sessionId);
    if (!entry) return false;
    if (beforeMessageId && entry.lastMessageId >= beforeMessageId) return false;
    entry.controller.abort(new TurnAbortedError(reason));
    return true;
  }

  /** Aborts every running turn (process shutdown); their messages stay pending for the next worker. */
  abortAll(reason: string): void {
    for (const entry of this.running.values()) entry.controller.abort(new TurnAbortedError(reason));
  }

  get size(): number {
    return this.running.size;
  }

  /** Whether a turn of the session runs in this process. */
  has(sessionId: string): boolean {
    return this.running.has(sessionId);
  }
}

/** The reason a turn was aborted: `/stop`, `stopTurn`, a newer message in `interrupt` mode, shutdown. */
export class TurnAbortedError extends Error {
  /** Reason used on shutdown: the turn is left pending and answered again after the restart. */
  static readonly SHUTDOWN = 'shutdown';

  constructor(readonly reason: string) {
    super(`Turn aborted: ${reason}`);
    this.name = 'TurnAbortedError';
  }
}
