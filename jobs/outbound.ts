import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Ctx } from '../server/common/ctx';
import type { Logger } from '../server/common/logger';
import type { ChannelRegistry } from '../server/channels/channel-registry';
import type { NoticeSender } from '../server/channels/direct-replier';
import { splitMessage } from '../server/channels/message-splitter';
import { PermanentDeliveryError } from '../server/channels/channel.types';
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
const RETRY_BASE_MS = 1000;

/**
 * Adds an item to its chat's mailbox unless it is already waiting or was delivered.
 * KEYS: done marker, item, mailbox. ARGV: item JSON, TTL seconds, key.
 */
const ADD_TO_MAILBOX = `
if redis.call('exists', KEYS[1]) == 1 then return 0 end
if redis.call('set', KEYS[2], ARGV[1], 'EX', ARGV[2], 'NX') then
  redis.call('rpush', KEYS[3], ARGV[3])
  return 1
end
return 0`;

interface OutboxItem {
  chunks: string[];
}

/**
 * Delivery of replies and notices to platform chats. Each chat has a mailbox in Redis (a list of keys,
 * each with its chunks, split to the channel's limit when handed over); a `outbound.deliver` job takes
 * the chat's lock and sends the mailbox oldest first, so one chat gets its messages in the order they
 * were handed over while chats are served in parallel. A key is added once (handing it over again while
 * it waits, or after it was delivered, does nothing). Each chunk is marked sent in Redis under its
 * idempotency key and skipped when marked, so a retried or re-run job never sends a chunk twice. A
 * message whose send fails stays first in its mailbox and is retried with back-off; after `attempts`
 * failures it is given up (logged) and the chat goes on.
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
    this.locks = new RedisLock(redis, options.lockMs);
  }

  private limitFor(channel: string): number {
    return this.channels.get(channel)?.maxMessageLength ?? 4000;
  }

  private key(kind: 'mailbox' | 'item' | 'done' | 'failures' | 'retry' | 'lock', id: string): string {
    return `${this.options.prefix}:outbound:${kind}:${id}`;
  }

  private chatOf(channel: string, chatId: string): string {
    return `${channel}:${chatId}`;
  }

  private async enqueue(ctx: Ctx, channel: string, chatId: string, key: string, text: string): Promise<void> {
    const item: OutboxItem = { chunks: splitMessage(text, this.limitFor(channel)) };
    const chat = this.chatOf(channel, chatId);
    await this.redis.eval(ADD_TO_MAILBOX, 3, this.key('done', key), this.key('item', key), this.key('mailbox', chat), JSON.stringify(item), String(SENT_TTL_SECONDS), key);
    // Also when the key was already there: a drain job costs little and makes sure the mailbox is served.
    const data: JobData<'outbound.deliver'> = { ctx: ctx.serialize(), channel, chatId, key };
    await this.queue.add('outbound.deliver', data, {
      jobId: `deliver_${key}`.replace(/:/g, '_'),
      attempts: this.options.attempts,
      backoff: { type: 'exponential', delay: RETRY_BASE_MS },
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

  /** Takes the first key off a mailbox (it was delivered or given up) and remembers it as done. */
  private async finishHead(mailbox: string, key: string): Promise<void> {
    await this.redis
      .multi()
      .set(this.key('done', key), '1', 'EX', SENT_TTL_SECONDS)
      .del(this.key('item', key), this.key('failures', key), this.key('retry', key))
      .lrem(mailbox, 1, key)
      .exec();
  }

  async startWorker(workerConnection: Redis): Promise<() => Promise<void>> {
    const { logger } = this.options;
    const worker = new Worker<JobData<'outbound.deliver'>, JobResult<'outbound.deliver'>>(
      QUEUES.outbound,
      async (job: Job<JobData<'outbound.deliver'>>, token?: string, signal?: AbortSignal) => {
        const { channel, chatId } = job.data;
        const transport = this.channels.get(channel);
        if (!transport || !this.channels.isStarted(channel)) throw new Error(`channel ${channel} is not running in this worker`);
        const chat = this.chatOf(channel, chatId);
        const lock = await this.locks.tryAcquire(this.key('lock', chat));
        if (!lock) {
          // Another job is serving this chat; it also sends what this job was added for.
          await job.moveToDelayed(Date.now() + 200, token);
          throw new DelayedError();
        }
        const mailbox = this.key('mailbox', chat);
        let sent = 0;
        let skipped = 0;
        try {
          while (!lock.lost) {
            const key = await this.redis.lindex(mailbox, 0);
            if (key === null) break;
            const backoff = await this.redis.pttl(this.key('retry', key));
            if (backoff > 0) {
              // The first message failed recently: wait for its back-off (later ones wait behind it).
              await job.moveToDelayed(Date.now() + backoff, token);
              throw new DelayedError();
            }
            const raw = await this.redis.get(this.key('item', key));
            const chunks = raw ? (JSON.parse(raw) as OutboxItem).chunks : [];
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
            } catch (err) {
              if (signal?.aborted) throw err;
              const failures = await this.redis.incr(this.key('failures', key));
              await this.redis.expire(this.key('failures', key), SENT_TTL_SECONDS);
              if (failures < this.options.attempts && !(err instanceof PermanentDeliveryError)) {
                // The message stays first in its chat's mailbox: later ones wait for it.
                const delay = RETRY_BASE_MS * 2 ** (failures - 1);
                await this.redis.set(this.key('retry', key), '1', 'PX', delay);
                logger.warn({ err: (err as Error).message, channel, key, failures, retryInMs: delay }, 'delivery failed; retrying');
                await job.moveToDelayed(Date.now() + delay, token);
                throw new DelayedError();
              }
              logger.error({ err: (err as Error).message, channel, key, failures }, 'delivery given up');
            }
            await this.finishHead(mailbox, key);
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
