import type { Queue, Worker } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { DeliveryJobs, DeliveryService } from '../server/channels/delivery';
import { delayJob, makeQueue, makeWorker, type QueueEnv } from './bull';
import { QUEUES, type JobData } from './queues';

/**
 * Producer: one `outbound.deliver` job per handed-over message (job id from its key, so added once), on the
 * channel's own queue, so the process that holds the channel sends it whichever worker ran the turn.
 */
export function deliveryJobs(env: QueueEnv, attempts: number): DeliveryJobs & { close(): Promise<void> } {
  const queues = new Map<string, Queue>();
  const queueOf = (channel: string) => {
    let queue = queues.get(channel);
    if (!queue) queues.set(channel, (queue = makeQueue(env, QUEUES.outbound(channel))));
    return queue;
  };
  return {
    schedule: async (channel, chatId, key, at) => {
      const queue = queueOf(channel);
      const data: JobData<'outbound.deliver'> = {
        ctx: Ctx.system(env.logger, 'delivery').serialize(),
        channel,
        chatId,
        key,
      };
      await queue.add('outbound.deliver', data, {
        jobId: `deliver_${key}`.replace(/:/g, '_'),
        attempts,
        ...(at !== undefined && at > Date.now() ? { delay: at - Date.now() } : {}),
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: { age: 86_400 },
        removeOnFail: { age: 7 * 86_400 },
      });
    },
    close: async () => {
      await Promise.all([...queues.values()].map((q) => q.close()));
    },
  };
}

/**
 * Worker of one channel's deliveries (run where the channel is held): serves the job's chat mailbox; a busy
 * chat or a back-off moves the job back to delayed.
 */
export function startOutboundWorker(
  env: QueueEnv,
  delivery: DeliveryService,
  concurrency: number,
  channel: string,
): Promise<Worker> {
  return makeWorker<'outbound.deliver'>(
    env,
    QUEUES.outbound(channel),
    async (job, token, signal) => {
      const ctx = Ctx.deserialize(job.data.ctx, env.logger, signal);
      const { retryAt, sent, skipped } = await delivery.drain(ctx, job.data.channel, job.data.chatId, signal);
      if (retryAt) return delayJob(job, token, retryAt);
      return { sent, skipped };
    },
    { concurrency },
  );
}
