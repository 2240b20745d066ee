import type { Worker } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { TurnJobs, TurnRunner } from '../server/modules/conversation';
import { delayJob, makeQueue, makeWorker, type QueueEnv } from './bull';
import { QUEUES, type JobData } from './queues';

/** How long a drain job that found its session busy waits before it tries again. */
const BUSY_RETRY_MS = 250;

/** Producer: one `turn.drain` job per inbound message (the mailbox itself is the database). */
export function turnJobs(env: QueueEnv): TurnJobs & { close(): Promise<void> } {
  const queue = makeQueue(env, QUEUES.turns);
  return {
    schedule: async (sessionId, messageId) => {
      const data: JobData<'turn.drain'> = { ctx: Ctx.system(env.logger, 'turn').serialize(), sessionId, messageId };
      await queue.add('turn.drain', data, { removeOnComplete: 1000, removeOnFail: 1000, attempts: 3, backoff: { type: 'exponential', delay: 500 } });
    },
    close: () => queue.close(),
  };
}

/** Worker: drains the job's session; a busy session is tried again shortly. */
export function startTurnWorker(env: QueueEnv, runner: TurnRunner, concurrency: number): Promise<Worker> {
  return makeWorker<'turn.drain'>(
    env,
    QUEUES.turns,
    async (job, token, signal) => {
      const ctx = Ctx.deserialize(job.data.ctx, env.logger, signal);
      const outcome = await runner.drain(ctx, job.data.sessionId, signal);
      if (outcome.status === 'busy') return delayJob(job, token, Date.now() + BUSY_RETRY_MS);
      return { turns: outcome.turns };
    },
    { concurrency, maxStalledCount: 10 },
  );
}
