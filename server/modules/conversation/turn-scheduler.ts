import type { Message, Session } from '../sessions';

/**
 * Port: hands sessions with queued messages to the turn workers, and reaches running turns wherever they
 * run. `TurnControl` implements it from the smaller ports below; tests may use an in-process one.
 */
export interface TurnScheduler {
  /** Makes sure the session's queued messages will be drained, in order, by exactly one worker at a time. */
  schedule(sessionId: string, messageId?: string): Promise<void>;
  /**
   * Takes the session's lock for a message about to be stored, when this process runs turns and has a
   * free slot: the message is then answered here at once (no queue hop). Null otherwise (no turn
   * workers here, every slot taken, the session busy): store the message as queued and `schedule`.
   */
  reserve(sessionId: string): Promise<TurnReservation | null>;
  /**
   * Aborts the session's running turn, wherever it runs; resolves true when one was running. With
   * `beforeMessageId`, only a turn answering older messages is aborted.
   */
  requestAbort(sessionId: string, reason: string, beforeMessageId?: string): Promise<boolean>;
  /** Whether a turn of the session is running right now. */
  isRunning(sessionId: string): Promise<boolean>;
}

/** A message stored under a reservation, already marked as being answered by `turnId`. */
export interface ClaimedTurn {
  session: Session;
  message: Message;
  turnId: string;
}

/** A session's lock taken by `TurnScheduler.reserve`; exactly one of its methods is called. */
export interface TurnReservation {
  /** Answers the claimed message now, in the background, then lets the session go. */
  run(claimed: ClaimedTurn): void;
  /** Drains the session now, in the background, as a queued drain would (older messages were waiting). */
  drain(): void;
  /** Lets the session go unused (nothing was stored). */
  cancel(): Promise<void>;
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
