import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Ctx } from '../server/common/ctx';
import type { Logger } from '../server/common/logger';
import type { ChannelRegistry } from '../server/channels/channel-registry';
import type { NoticeSender } from '../server/channels/direct-replier';
import { splitMessage } from '../server/channels/message-splitter';
import type { OutboundRequest, OutboundSender } from '../server/modules/agent/agent.ports';
import { QUEUES, type JobData, type JobResult } from './queues';
import { RedisLock } from './redis-lock';

export interface OutboundQueueOptions {
  prefix: string;
  lockMs: number;
  stalledIntervalMs: number;
  concurrency: number;
  attempts: number;
  logger: Logger;
}

const SENT_TTL_SECONDS = 7 * 86_400;

/**
 * Delivery of replies to platform chats. A reply is split to the channel's limit when it is enqueued;
 * the job (id = the reply's key, so enqueuing twice adds it once) sends its chunks in order under the
 * chat's lock (one chat is served in order), marks each chunk sent in Redis under its idempotency key,
 * and skips chunks already marked, so a retried or re-run job never sends a chunk twice.
 */
export class OutboundQueue implements OutboundSender, NoticeSender {
  private readonly queue: Queue;
  private readonly locks: RedisLock;

  constructor(
    private readonly redis: Redis,
    private readonly channels: ChannelRegistry,
    private readonly options: OutboundQueueOptions,
  ) {
    this.queue = new Queue(QUEUES.outbound, { connection: redis, prefix: `${options.prefix}:bull` });
    this.locks = new RedisLock(redis, 60_000);
  }

  private limitFor(channel: string): number {
    return this.channels.get(channel)?.maxMessageLength ?? 4000;
  }

  private async enqueue(ctx: Ctx, channel: string, chatId: string, key: string, text: string): Promise<void> {
    const data: JobData<'outbound.deliver'> = { ctx: ctx.serialize(), channel, chatId, key, chunks: splitMessage(text, this.limitFor(channel)) };
    await this.queue.add('outbound.deliver', data, {
      jobId: key.replace(/:/g, '_'),
      attempts: this.options.attempts,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: { age: 86_400 },
      removeOnFail: { age: 7 * 86_400 },
    });
  }

  deliver(ctx: Ctx, req: OutboundRequest): Promise<void> {
    return this.enqueue(ctx, req.channel, req.chatId, `reply:${req.messageId}`, req.text);
  }

  notify(ctx: Ctx, target: { channel: string; chatId: string; key: string }, text: string): Promise<void> {
    return this.enqueue(ctx, target.channel, target.chatId, target.key, text);
  }

  private sentKey(key: string, index: number): string {
    return `${this.options.prefix}:outbound:sent:${key}:${index}`;
  }

  async startWorker(workerConnection: Redis): Promise<() => Promise<void>> {
    const { logger } = this.options;
    const worker = new Worker<JobData<'outbound.deliver'>, JobResult<'outbound.deliver'>>(
      QUEUES.outbound,
      async (job: Job<JobData<'outbound.deliver'>>, token?: string, signal?: AbortSignal) => {
        const { channel, chatId, key, chunks } = job.data;
        const transport = this.channels.get(channel);
        if (!transport || !this.channels.isStarted(channel)) throw new Error(`channel ${channel} is not running in this worker`);
        const lock = await this.locks.tryAcquire(`${this.options.prefix}:outbound:chat:${channel}:${chatId}`);
        if (!lock) {
          await job.moveToDelayed(Date.now() + 200, token);
          throw new DelayedError();
        }
        let sent = 0;
        let skipped = 0;
        try {
          for (let i = 0; i < chunks.length; i++) {
            const sentKey = this.sentKey(key, i);
            if (await this.redis.exists(sentKey)) {
              skipped += 1;
              continue;
            }
            await transport.send({ chatId, text: chunks[i]!, idempotencyKey: `${key}:${i}` }, signal);
            await this.redis.set(sentKey, '1', 'EX', SENT_TTL_SECONDS);
            sent += 1;
          }
        } finally {
          await lock.release();
        }
        return { sent, skipped };
      },
      {
        connection: workerConnection,
        prefix: `${this.options.prefix}:bull`,
        concurrency: this.options.concurrency,
        lockDuration: this.options.lockMs,
        stalledInterval: this.options.stalledIntervalMs,
      },
    );
    worker.on('failed', (job, err) => logger.warn({ err: err.message, channel: job?.data.channel, attempts: job?.attemptsMade }, 'delivery failed'));
    worker.on('error', (err) => logger.error({ err }, 'outbound worker error'));
    await worker.waitUntilReady();
    return () => worker.close();
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
