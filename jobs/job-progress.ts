import { Queue, QueueEvents, type Job } from 'bullmq';
import { NotFoundError } from '../server/common/errors';
import { pushIterator } from '../server/common/push-iterator';
import { JobState, type JobProgressSource, type JobProgressUpdate } from '../server/modules/queues';
import type { QueueEnv } from './bull';

/** How often a followed job's state is re-read (a safety net behind the events). */
const STATE_POLL_MS = 2000;

function percentOf(state: JobState, progress: unknown): number | null {
  if (state === JobState.COMPLETED) return 100;
  if (progress && typeof progress === 'object' && 'done' in progress && 'total' in progress) {
    const { done, total } = progress as { done: number; total: number };
    return total > 0 ? Math.min(100, Math.round((done / total) * 100)) : 0;
  }
  return typeof progress === 'number' ? progress : null;
}

/**
 * Follows jobs of the given queues with BullMQ's QueueEvents (one event reader per queue, started by
 * `start`, so no event between a job's current state and the live updates is missed).
 */
export class BullJobProgress implements JobProgressSource {
  private readonly queues = new Map<string, Queue>();
  private readonly events = new Map<string, QueueEvents>();

  constructor(
    private readonly env: QueueEnv,
    private readonly queueNames: readonly string[],
  ) {}

  private ready: Promise<void> | null = null;

  /** Starts the event readers (once; `follow` calls it). */
  start(): Promise<void> {
    this.ready ??= this.open();
    return this.ready;
  }

  private async open(): Promise<void> {
    for (const name of this.queueNames) {
      this.queues.set(name, new Queue(name, { connection: this.env.redis, prefix: `${this.env.prefix}:bull` }));
      const events = new QueueEvents(name, { connection: this.env.connect(`events-${name}`), prefix: `${this.env.prefix}:bull` });
      events.on('error', (err) => this.env.logger.warn({ err, queue: name }, 'queue events reader failed'));
      await events.waitUntilReady();
      this.events.set(name, events);
    }
  }

  async follow(jobId: string): Promise<AsyncIterableIterator<JobProgressUpdate>> {
    await this.start();
    for (const [name, queue] of this.queues) {
      const job = await queue.getJob(jobId);
      if (job) return this.followJob(name, queue, job);
    }
    throw new NotFoundError('Job', jobId);
  }

  async requesterOf(jobId: string): Promise<string | null> {
    await this.start();
    for (const queue of this.queues.values()) {
      const job = await queue.getJob(jobId);
      if (!job) continue;
      const actor = (job.data as { ctx?: { actor?: { kind?: string; userId?: unknown } } } | undefined)?.ctx?.actor;
      return actor?.kind === 'user' && typeof actor.userId === 'string' ? actor.userId : null;
    }
    return null;
  }

  private followJob(queueName: string, queue: Queue, job: Job): AsyncIterableIterator<JobProgressUpdate> {
    const events = this.events.get(queueName)!;
    const update = (state: JobState, progress: unknown, extra: Partial<JobProgressUpdate> = {}): JobProgressUpdate => ({
      jobId: job.id!,
      queue: queueName,
      state,
      progress: progress ?? null,
      percent: percentOf(state, progress),
      result: null,
      error: null,
      ...extra,
    });
    let lastProgress: unknown = job.progress;
    return pushIterator<JobProgressUpdate>((push, end) => {
      let finished = false;
      const finish = (u: JobProgressUpdate) => {
        if (finished) return;
        finished = true;
        push(u);
        end();
      };
      const onProgress = ({ jobId, data }: { jobId: string; data: unknown }) => {
        if (jobId !== job.id || finished) return;
        lastProgress = data;
        push(update(JobState.ACTIVE, data));
      };
      const onCompleted = ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) => {
        if (jobId === job.id) finish(update(JobState.COMPLETED, lastProgress, { result: returnvalue }));
      };
      const onFailed = ({ jobId, failedReason }: { jobId: string; failedReason: string }) => {
        if (jobId === job.id) finish(update(JobState.FAILED, lastProgress, { error: failedReason }));
      };
      events.on('progress', onProgress);
      events.on('completed', onCompleted);
      events.on('failed', onFailed);
      // The state now, read after the listeners are on: a job that ended meanwhile ends the stream here.
      // The same check repeats now and then, in case the end fell before the event reader's first read.
      const check = async (first: boolean) => {
        // The state first, then the job: read the other way, a job that completes in between shows as
        // completed without its result.
        const state = (await queue.getJobState(job.id!)) as JobState;
        const fresh = (await queue.getJob(job.id!)) ?? job;
        if (state === JobState.COMPLETED) finish(update(state, fresh.progress, { result: fresh.returnvalue }));
        else if (state === JobState.FAILED) finish(update(state, fresh.progress, { error: fresh.failedReason ?? null }));
        else if (first && !finished) {
          lastProgress = fresh.progress;
          push(update(state, fresh.progress));
        }
      };
      const fail = (err: unknown) => {
        this.env.logger.warn({ err, jobId: job.id }, 'cannot read the state of a followed job');
        end();
      };
      void check(true).catch(fail);
      const poll = setInterval(() => void check(false).catch(fail), STATE_POLL_MS);
      poll.unref();
      return () => {
        clearInterval(poll);
        events.off('progress', onProgress);
        events.off('completed', onCompleted);
        events.off('failed', onFailed);
      };
    });
  }

  async close(): Promise<void> {
    for (const events of this.events.values()) await events.close();
    for (const queue of this.queues.values()) await queue.close();
  }
}
