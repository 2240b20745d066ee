import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { Ctx } from '../server/common/ctx';
import type { Logger } from '../server/common/logger';
import type { ExchangeRef, SummarizerService, SummaryJobs } from '../server/modules/summarizer';
import { QUEUES, type JobData, type JobResult } from './queues';

export interface SummarizerQueueOptions {
  prefix: string;
  lockMs: number;
  stalledIntervalMs: number;
  /** Exchanges summarized at once per worker process. */
  concurrency: number;
  logger: Logger;
}

/**
 * The `summarizer` queue: one `summarizer.exchange` job per finished exchange (job id from the reply,
 * so an exchange is summarized once), run in the background; the model call itself goes through the
 * model-calls queue at `summarizer` priority. Failed model calls are retried with back-off; an
 * unusable model answer is skipped by the service, not retried.
 */
export class SummarizerQueue implements SummaryJobs {
  private readonly queue: Queue;

  constructor(
    redis: Redis,
    private readonly options: SummarizerQueueOptions,
  ) {
    this.queue = new Queue(QUEUES.summarizer, { connection: redis, prefix: `${options.prefix}:bull` });
  }

  async enqueueExchange(ctx: Ctx, exchange: ExchangeRef): Promise<void> {
    const data: JobData<'summarizer.exchange'> = { ctx: ctx.serialize(), ...exchange };
    await this.queue.add('summarizer.exchange', data, {
      jobId: `exchange_${exchange.replyMessageId}`,
      attempts: 3,
      backoff: { type: 'exponential', delay: 2000 },
      removeOnComplete: { age: 3600, count: 1000 },
      removeOnFail: { age: 86_400, count: 1000 },
    });
  }

  async startWorker(service: SummarizerService, workerConnection: Redis): Promise<() => Promise<void>> {
    const { logger } = this.options;
    const worker = new Worker<JobData<'summarizer.exchange'>, JobResult<'summarizer.exchange'>>(
      QUEUES.summarizer,
      async (job: Job<JobData<'summarizer.exchange'>>) => {
        const { ctx: serialized, ...exchange } = job.data;
        // Memories are written by the server on the user's behalf, whatever the sender's trust.
        const ctx = new Ctx({ actor: { kind: 'system', reason: 'summarizer' }, logger: logger.child({ sessionId: exchange.sessionId }), requestId: serialized.requestId });
        return { memories: await service.summarizeExchange(ctx, exchange) };
      },
      {
        connection: workerConnection,
        prefix: `${this.options.prefix}:bull`,
        concurrency: this.options.concurrency,
        lockDuration: this.options.lockMs,
        stalledInterval: this.options.stalledIntervalMs,
      },
    );
    worker.on('failed', (job, err) => logger.warn({ err: err.message, sessionId: job?.data.sessionId, attempts: job?.attemptsMade }, 'summarizer job failed'));
    worker.on('error', (err) => logger.error({ err }, 'summarizer worker error'));
    await worker.waitUntilReady();
    return () => worker.close();
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
