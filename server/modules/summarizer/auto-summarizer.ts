import type { Ctx } from '../../common/ctx';
import type { ExchangeListener } from '../agent';
import type { Session } from '../sessions';
import { memoryOwnerOf, type ExchangeRef } from './summarizer.service';

/** Port: hands an exchange to the summarizer queue (BullMQ in jobs/summarizer.ts). */
export interface SummaryJobs {
  enqueueExchange(ctx: Ctx, exchange: ExchangeRef): Promise<void>;
}

/**
 * `session.summarizer_mode: auto`: after every finished exchange, a `summarizer.exchange` job condenses
 * it into memories in the background. `manual`: nothing per turn (the compaction valve still applies).
 * Never fails the turn: a queue problem is logged.
 */
export class AutoSummarizer implements ExchangeListener {
  constructor(
    private readonly jobs: SummaryJobs,
    private readonly mode: () => 'auto' | 'manual',
  ) {}

  async afterExchange(ctx: Ctx, session: Session, exchange: { userMessageIds: string[]; replyMessageId: string }): Promise<void> {
    if (this.mode() !== 'auto' || !memoryOwnerOf(session)) return;
    try {
      await this.jobs.enqueueExchange(ctx, { sessionId: session.id, ...exchange });
    } catch (err) {
      ctx.logger.warn({ err, sessionId: session.id }, 'could not queue the exchange for the summarizer');
    }
  }
}
