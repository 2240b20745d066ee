/**
 * Port: hands sessions with queued messages to the turn workers. The BullMQ implementation lives in
 * jobs/; tests may use an in-process one.
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
