import type { Ctx } from '../../common/ctx';
import { ConflictError } from '../../common/errors';
import type { Db } from '../../persistence/db';
import type { SessionChores, TurnScheduler } from '../conversation';
import { Session, SessionStatus } from '../sessions';
import type { CompactionResult, CompactionService } from './compaction.service';

/** A compaction asked for while a turn ran. */
export interface CompactionRequest {
  instructions: string | null;
}

/** Port: compactions waiting for their session's turn to finish (Redis in server/redis/). */
export interface CompactionRequests {
  put(sessionId: string, request: CompactionRequest): Promise<void>;
  /** Takes the session's request away (null when there is none). */
  take(sessionId: string): Promise<CompactionRequest | null>;
}

const DONE_NOTICE = '🗜️ This session was compacted as you asked; it continues in a new session. /memory shows the summary.';

/**
 * `/compact` while a turn runs: instead of refusing, the request waits and runs right after the
 * session's turns, while the turn runner still holds the session (so no turn overlaps it); the sender
 * is told when it is done. A drain is scheduled with the request, so it runs even when no message follows.
 */
export class DeferredCompaction implements SessionChores {
  constructor(
    private readonly deps: { db: Db; compaction: CompactionService; requests: CompactionRequests; scheduler: TurnScheduler },
  ) {}

  /** Compacts now when the session is free; otherwise queues the compaction after the running turn. */
  async compactOrQueue(ctx: Ctx, session: Session, instructions: string | null): Promise<{ result: CompactionResult } | { queued: true }> {
    try {
      return { result: await this.deps.compaction.compactNow(ctx, session, instructions) };
    } catch (err) {
      if (!(err instanceof ConflictError) || !(await this.deps.scheduler.isRunning(session.id))) throw err;
    }
    await this.deps.requests.put(session.id, { instructions });
    await this.deps.scheduler.schedule(session.id);
    return { queued: true };
  }

  /** Called by the turn runner after a drain, holding the session's lock; waits while messages are pending. */
  async afterDrain(ctx: Ctx, sessionId: string, stillPending: () => Promise<boolean>): Promise<void> {
    const request = await this.deps.requests.take(sessionId);
    if (!request) return;
    if (await stillPending()) {
      // A message is waiting: the drain that answers it compacts afterwards.
      await this.deps.requests.put(sessionId, request);
      return;
    }
    const session = await this.deps.db.repo(ctx, Session).findOneBy({ id: sessionId });
    if (session?.status !== SessionStatus.ACTIVE) return;
    try {
      await this.deps.compaction.compact(ctx, session, { reason: 'compact', instructions: request.instructions, priority: 'interactive', notice: DONE_NOTICE });
    } catch (err) {
      ctx.logger.warn({ err, sessionId }, 'queued compaction failed');
    }
  }
}
