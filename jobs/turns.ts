import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { Ctx } from '../server/common/ctx';
import type { Logger } from '../server/common/logger';
import type { RunningTurns, TurnRunner, TurnScheduler, TurnService } from '../server/modules/conversation';
import { QUEUES, type JobData, type JobResult } from './queues';
import { RedisLock } from './redis-lock';

export interface TurnQueueOptions {
  prefix: string;
  lockMs: number;
  concurrency: number;
  stalledIntervalMs: number;
  logger: Logger;
}

interface AbortRequest {
  sessionId: string;
  reason: string;
  beforeMessageId?: string;
}

/**
 * Ordered turns on BullMQ. OSS BullMQ has no per-group ordering, so every session has a durable mailbox
 * (its QUEUED messages in the database) and each inbound message adds a `turn.drain` job. A job first
 * takes the session's Redis lock; without it, it moves itself back to delayed and tries again shortly.
 * With it, it answers the session's pending messages oldest first until none is left. So a session is
 * answered by one worker at a time, in arrival order, while sessions run in parallel; a worker that
 * dies loses its lock after `lockMs` and its job is run again (stalled-job recovery), and messages it
 * left PROCESSING are answered again by the next holder.
 */
export class TurnQueue implements TurnScheduler {
  private readonly queue: Queue;
  private readonly locks: RedisLock;
  private readonly abortChannel: string;

  constructor(
    private readonly redis: Redis,
    private readonly options: TurnQueueOptions,
  ) {
    this.queue = new Queue(QUEUES.turns, { connection: redis, prefix: `${options.prefix}:bull` });
    this.locks = new RedisLock(redis, options.lockMs);
    this.abortChannel = `${options.prefix}:turn-abort`;
  }

  lockKey(sessionId: string): string {
    return `${this.options.prefix}:turn:lock:${sessionId}`;
  }

  async schedule(sessionId: string, messageId = ''): Promise<void> {
    const data: JobData<'turn.drain'> = { sessionId, messageId };
    await this.queue.add('turn.drain', data, { removeOnComplete: 1000, removeOnFail: 1000, attempts: 3, backoff: { type: 'exponential', delay: 500 } });
  }

  async requestAbort(sessionId: string, reason: string, beforeMessageId?: string): Promise<boolean> {
    const running = await this.isRunning(sessionId);
    const req: AbortRequest = { sessionId, reason, beforeMessageId };
    await this.redis.publish(this.abortChannel, JSON.stringify(req));
    return running;
  }

  isRunning(sessionId: string): Promise<boolean> {
    return this.locks.isHeld(this.lockKey(sessionId));
  }

  /**
   * Starts this process's turn worker and its abort listener (on `subscriber`, a dedicated connection).
   * Returns a function that stops both.
   */
  async startWorker(
    deps: { turns: TurnService; runner: TurnRunner; running: RunningTurns; workerConnection: Redis; subscriber: Redis },
  ): Promise<() => Promise<void>> {
    const { logger } = this.options;
    await deps.subscriber.subscribe(this.abortChannel);
    deps.subscriber.on('message', (channel: string, payload: string) => {
      if (channel !== this.abortChannel) return;
      try {
        const req = JSON.parse(payload) as AbortRequest;
        if (deps.running.abort(req.sessionId, req.reason, req.beforeMessageId)) logger.info({ sessionId: req.sessionId, reason: req.reason }, 'turn aborted');
      } catch {
        logger.warn('ignored a malformed turn-abort message');
      }
    });
    const worker = new Worker<JobData<'turn.drain'>, JobResult<'turn.drain'>>(
      QUEUES.turns,
      async (job: Job<JobData<'turn.drain'>>, token?: string, signal?: AbortSignal) => {
        const lock = await this.locks.tryAcquire(this.lockKey(job.data.sessionId));
        if (!lock) {
          // Another worker is answering this session; it will also see this job's message. Try later.
          await job.moveToDelayed(Date.now() + 250, token);
          throw new DelayedError();
        }
        try {
          const ctx = Ctx.system(logger, 'turn');
          const turns = await deps.turns.drainSession(ctx, job.data.sessionId, deps.runner, signal ?? new AbortController().signal);
          return { turns };
        } finally {
          await lock.release();
        }
      },
      {
        connection: deps.workerConnection,
        prefix: `${this.options.prefix}:bull`,
        concurrency: this.options.concurrency,
        lockDuration: this.options.lockMs,
        stalledInterval: this.options.stalledIntervalMs,
        maxStalledCount: 10,
      },
    );
    worker.on('failed', (job, err) => logger.error({ err, sessionId: job?.data.sessionId }, 'turn job failed'));
    worker.on('error', (err) => logger.error({ err }, 'turn worker error'));
    await worker.waitUntilReady();
    return async () => {
      await worker.close();
      await deps.subscriber.unsubscribe(this.abortChannel).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
