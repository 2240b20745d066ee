import type { Ctx } from '../../common/ctx';
import type { ExchangeListener } from '../agent';
import type { Session } from '../sessions';
import { memoryOwnerOf, type ExchangeRef } from './summarizer.service';

/**
 * Port: the summarizer queue (BullMQ in jobs/summarizer.ts). Finished exchanges wait in a per-session
 * list; one job per session condenses whatever is waiting when it runs.
 */
export interface SummaryJobs {
  /**
   * Adds an exchange to its session's waiting list; returns how many are waiting now, and the session's
   * job that has not started yet, if any: `later` (delayed) or `now` (due); `none` also when it runs.
   */
  addPending(ctx: Ctx, exchange: ExchangeRef): Promise<{ waiting: number; job: 'none' | 'later' | 'now' }>;
  /**
   * Makes sure a job will condense the session's waiting exchanges `delayMs` from now (an earlier one is
   * moved). With `quietMs`, the job waits on until the newest exchange is that old.
   */
  schedule(ctx: Ctx, sessionId: string, delayMs: number, quietMs?: number): Promise<void>;
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
 * for `summarizer_idle_seconds` (one delayed job per session, scheduled with the first exchange waiting). `manual`: nothing per turn (the compaction valve still applies).
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
      const { waiting, job } = await this.jobs.addPending(ctx, { sessionId: session.id, ...exchange });
      // A job already waiting for the session to go quiet looks at the newest exchange before it runs.
      if (waiting >= this.policy.batch()) {
        if (job !== 'now') await this.jobs.schedule(ctx, session.id, 0);
      } else if (job === 'none') await this.jobs.schedule(ctx, session.id, this.policy.idleMs(), this.policy.idleMs());
    } catch (err) {
      ctx.logger.warn({ err, sessionId: session.id }, 'could not queue the exchange for the summarizer');
    }
  }
}
