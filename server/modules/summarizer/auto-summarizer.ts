import type { Ctx } from '../../common/ctx';
import type { ExchangeListener } from '../agent';
import type { Session } from '../sessions';
import { memoryOwnerOf, type ExchangeRef } from './summarizer.service';

/**
 * Port: the summarizer queue (BullMQ in jobs/summarizer.ts). Finished exchanges wait in a per-session
 * list; one job per session condenses whatever is waiting when it runs.
 */
export interface SummaryJobs {
  /** Adds an exchange to its session's waiting list; returns how many are waiting now. */
  addPending(ctx: Ctx, exchange: ExchangeRef): Promise<number>;
  /** Makes sure a job will condense the session's waiting exchanges `delayMs` from now (an earlier one is moved). */
  schedule(ctx: Ctx, sessionId: string, delayMs: number): Promise<void>;
}

export interface AutoSummaryPolicy {
  mode: () => 'auto' | 'manual';
  /** Exchanges condensed in one summarizer call (`session.summarizer_batch`). */
  batch: () => number;
  /** A batch not yet full is condensed once the session has been quiet this long (`session.summarizer_idle_seconds`). */
  idleMs: () => number;
}

/**
 * `session.summarizer_mode: auto`: finished exchanges are condensed into memories in the background, in
 * batches: one summarizer call once `summarizer_batch` exchanges wait, or when the session has been quiet
 * for `summarizer_idle_seconds`. `manual`: nothing per turn (the compaction valve still applies).
 * Never fails the turn: a queue problem is logged.
 */
export class AutoSummarizer implements ExchangeListener {
  constructor(
    private readonly jobs: SummaryJobs,
    private readonly policy: AutoSummaryPolicy,
  ) {}

  async afterExchange(
    ctx: Ctx,
    session: Session,
    exchange: { userMessageIds: string[]; replyMessageId: string },
  ): Promise<void> {
    if (this.policy.mode() !== 'auto' || !memoryOwnerOf(session)) return;
    try {
      const waiting = await this.jobs.addPending(ctx, { sessionId: session.id, ...exchange });
      await this.jobs.schedule(ctx, session.id, waiting >= this.policy.batch() ? 0 : this.policy.idleMs());
    } catch (err) {
      ctx.logger.warn({ err, sessionId: session.id }, 'could not queue the exchange for the summarizer');
    }
  }
}
