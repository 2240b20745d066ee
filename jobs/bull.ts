import { DelayedError, Queue, Worker, type Job, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../server/common/logger';
import type { JobData, JobName, JobResult } from './queues';

/** Where and how this process's queues and workers connect. */
export interface QueueEnv {
  /** Key prefix of the deployment (`redis.prefix`); BullMQ keys live under `<prefix>:bull`. */
  prefix: string;
  /** Shared connection for producers. */
  redis: Redis;
  /**
   * The connection of a worker's regular commands: a dedicated one, or `redis` itself (sharedConnectionEnv).
   * BullMQ gives every worker its own blocking connection besides.
   */
  connect: (name: string) => Redis;
  lockMs: number;
  stalledIntervalMs: number;
  logger: Logger;
  /** Told about every failed job attempt (metrics). */
  onJobFailed?: (queue: string) => void;
}

/** Connection-level errors (Redis down or restarting): the Redis clients already log those, once. */
const CONNECTION_ERRORS = /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND|Connection is closed|Stream isn't writeable|LOADING|max retries/i;

/**
 * A job whose lock expired while it ran (Redis restarted or was unreachable longer than the lock, or the
 * event loop was held up): BullMQ refuses to finish it and its stall check hands it out again. Turns and
 * deliveries are idempotent, so this is a warning, not an error.
 */
const LOST_LOCK = /^Missing lock for job/;

/**
 * Listens to a queue's, worker's or queue-events' `error` event: BullMQ prints unheard errors on the
 * console with a stack, dozens a second while Redis is down. Connection errors are left to the Redis
 * clients' own (deduplicated) warning; anything else is logged at error level.
 */
export function logQueueErrors<T extends { on(event: 'error', listener: (err: Error) => void): unknown }>(emitter: T, logger: Logger, queue: string): T {
  emitter.on('error', (err: Error) => {
    if (CONNECTION_ERRORS.test(err.message)) logger.debug({ queue, reason: err.message }, 'queue connection error');
    else if (LOST_LOCK.test(err.message)) logger.warn({ queue, reason: err.message }, 'job lost its lock; the stall check runs it again');
    else logger.error({ err, queue }, 'queue error');
  });
  return emitter;
}

/**
 * The same env whose workers send their regular commands over the producers' connection: one connection,
 * handshake and copy of BullMQ's scripts less per worker. For workers off the turn path, whose few
 * commands do not need a socket of their own.
 */
export function sharedConnectionEnv(env: QueueEnv): QueueEnv {
  return { ...env, connect: () => env.redis };
}

export function makeQueue(env: QueueEnv, name: string): Queue {
  return logQueueErrors(new Queue(name, { connection: env.redis, prefix: `${env.prefix}:bull` }), env.logger, name);
}

export type Processor<N extends JobName> = (job: Job<JobData<N>>, token: string | undefined, signal: AbortSignal) => Promise<JobResult<N>>;

/** A worker with the deployment's lock and stall settings; resolves once it is connected. */
export async function makeWorker<N extends JobName>(
  env: QueueEnv,
  queue: string,
  processor: Processor<N>,
  options: Partial<WorkerOptions> & { concurrency: number },
): Promise<Worker> {
  const worker = new Worker<JobData<N>, JobResult<N>>(
    queue,
    (job, token, signal) => processor(job, token, signal ?? new AbortController().signal),
    {
      connection: env.connect(`worker-${queue}`),
      prefix: `${env.prefix}:bull`,
      lockDuration: env.lockMs,
      stalledInterval: env.stalledIntervalMs,
      // An idle worker polls for jobs this often at most (BullMQ caps it at 10 s); a new job wakes it at once.
      drainDelay: 10,
      ...options,
    },
  );
  logQueueErrors(worker, env.logger, queue);
  if (env.onJobFailed) worker.on('failed', () => env.onJobFailed!(queue));
  await worker.waitUntilReady();
  return worker;
}

/** Puts the job back to wait until `at` (ms epoch); BullMQ then expects the processor to throw this. */
export async function delayJob(job: Job, token: string | undefined, at: number): Promise<never> {
  await job.moveToDelayed(at, token);
  throw new DelayedError();
}

/** This process's name in the cluster, and whether another one still runs (see ProcessLiveness). */
export interface ProcessIdentity {
  readonly id: string;
  isAlive(id: string): Promise<boolean>;
}

/** How often a worker process looks for jobs a dead process was running. */
export const RECLAIM_EVERY_MS = 2000;

/**
 * Hands back the jobs of `queue` that a dead process's worker (named after its ProcessIdentity) was
 * running: each fails with "worker died" and is retried (its attempts allow) or given up. BullMQ's stall
 * check would do the same, but only after up to twice `stalled_interval_ms` (30 s by default), while
 * such a job still holds its slot, or its session's single drain job (the turn queue's deduplication).
 */
export async function reclaimDeadJobs(queue: Queue, redis: Redis, me: ProcessIdentity): Promise<number> {
  let reclaimed = 0;
  for (const job of await queue.getActive(0, 200)) {
    if (!job.processedBy || job.processedBy === me.id || (await me.isAlive(job.processedBy))) continue;
    const token = await redis.get(`${queue.toKey(job.id!)}:lock`);
    if (!token) continue; // the stall check has it already
    await job.moveToFailed(new Error(`the worker process running this job died (${job.processedBy})`), token, false);
    reclaimed++;
  }
  return reclaimed;
}

/** Reclaims at once and then every RECLAIM_EVERY_MS; returns the function that stops it. */
export async function keepReclaiming(env: QueueEnv, queues: () => Queue[], me: ProcessIdentity, what: string): Promise<() => void> {
  const pass = async () => {
    let n = 0;
    for (const queue of queues()) n += await reclaimDeadJobs(queue, env.redis, me);
    if (n) env.logger.info({ reclaimed: n }, `${what} of a dead worker process handed back`);
  };
  await pass().catch(() => undefined);
  const timer = setInterval(() => void pass().catch((err: Error) => env.logger.debug({ err: err.message }, `${what}: reclaim failed`)), RECLAIM_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
