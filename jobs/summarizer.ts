import type { Worker } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { ExchangeRef, SummarizerService, SummaryJobs } from '../server/modules/summarizer';
import { makeQueue, makeWorker, type QueueEnv } from './bull';
import { QUEUES, type JobData } from './queues';

/**
 * Producer: one `summarizer.exchange` job per finished exchange (job id from the reply, so an exchange is
 * summarized once); failed model calls are retried with back-off.
 */
export function summaryJobs(env: QueueEnv): SummaryJobs & { close(): Promise<void> } {
  const queue = makeQueue(env, QUEUES.summarizer);
  return {
    enqueueExchange: async (ctx, exchange: ExchangeRef) => {
      const data: JobData<'summarizer.exchange'> = { ctx: ctx.serialize(), ...exchange };
      await queue.add('summarizer.exchange', data, {
        jobId: `exchange_${exchange.replyMessageId}`,
        attempts: 3,
        backoff: { type: 'exponential', delay: 2000 },
        removeOnComplete: { age: 3600, count: 1000 },
        removeOnFail: { age: 86_400, count: 1000 },
      });
    },
    close: () => queue.close(),
  };
}

/** Worker: condenses one exchange into memories. */
export function startSummarizerWorker(env: QueueEnv, summarizer: SummarizerService, concurrency: number): Promise<Worker> {
  return makeWorker<'summarizer.exchange'>(
    env,
    QUEUES.summarizer,
    async (job, _token, signal) => {
      const { ctx, ...exchange } = job.data;
      return { memories: await summarizer.summarizeExchange(Ctx.deserialize(ctx, env.logger, signal).asSystem('summarizer'), exchange) };
    },
    { concurrency },
  );
}
