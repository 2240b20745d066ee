/**
 * Port: hands sessions with queued messages to the turn workers, and reaches running turns wherever they
 * run. `TurnControl` implements it from the smaller ports below; tests may use an in-process one.
 */
export interface TurnScheduler {
  /** Makes sure the session's queued messages will be drained, in order, by exactly one worker at a time. */
  schedule(sessionId: string, messageId?: string): Promise<void>;
  /**
   * Aborts the session's running turn, wherever it runs; resolves true when one was running. With
   * `beforeMessageId`, only a turn answering older messages is aborted.
   */
  requestAbort(sessionId: string, reason: string, beforeMessageId?: string): Promise<boolean>;
  /** Whether a turn of the session is running right now. */
  isRunning(sessionId: string): Promise<boolean>;
}

/** Port: adds a drain job for a session (the `turns` queue in jobs/). */
export interface TurnJobs {
  schedule(sessionId: string, messageId: string): Promise<void>;
}

export interface AbortRequest {
  sessionId: string;
  reason: string;
  beforeMessageId?: string;
}

/** Port: carries abort requests to every worker process (Redis pub/sub in server/redis/). */
export interface TurnAbortBus {
  publish(req: AbortRequest): Promise<void>;
  /** Calls `fn` for every request published anywhere; returns a function that stops listening. */
  listen(fn: (req: AbortRequest) => void): Promise<() => Promise<void>>;
}
