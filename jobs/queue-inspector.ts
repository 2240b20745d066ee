import { Queue, type Job, type JobType } from 'bullmq';
import type { Redis } from 'ioredis';
import { JOB_STATES, type JobState, type QueueInspector, type QueueJobInfo } from '../server/modules/queues';
import { QUEUES } from './queues';

/** The queues of a deployment: the fixed ones plus one outbound queue per platform channel and one model-calls queue per provider. */
export function queueNames(providers: readonly string[], channels: readonly string[] = []): string[] {
  return [QUEUES.turns, ...channels.map((c) => QUEUES.outbound(c)), QUEUES.summarizer, QUEUES.maintenance, QUEUES.heartbeat, QUEUES.skills, QUEUES.memory, QUEUES.ingest, QUEUES.voice, QUEUES.speech, ...providers.map((p) => QUEUES.modelCalls(p))];
}

/** BullMQ's getters behind the `QueueInspector` port (read-only Queue objects on a shared connection). */
export class BullQueueInspector implements QueueInspector {
  private readonly queues = new Map<string, Queue>();

  /** @param prefix the BullMQ key prefix of the app (`<redis.prefix>:bull`) */
  constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
    /** The queues to show; a function when they change at run time (a channel set up from the console). */
    private readonly queueList: readonly string[] | (() => readonly string[]),
  ) {}

  names(): string[] {
    return [...(typeof this.queueList === 'function' ? this.queueList() : this.queueList)];
  }

  async counts(queue: string): Promise<Record<JobState, number>> {
    const counts = await this.queue(queue).getJobCounts(...(JOB_STATES as JobType[]));
    return Object.fromEntries(JOB_STATES.map((s) => [s, counts[s] ?? 0])) as Record<JobState, number>;
  }

  async jobs(queue: string, state: JobState, limit: number): Promise<QueueJobInfo[]> {
    const jobs = await this.queue(queue).getJobs([state as JobType], 0, limit - 1, false);
    return jobs.filter((j): j is Job => !!j).map((j) => this.info(queue, j, state));
  }

  async find(queue: string, id: string): Promise<QueueJobInfo | null> {
    const job = await this.queue(queue).getJob(id);
    if (!job) return null;
    const state = await job.getState();
    return this.info(queue, job, (JOB_STATES as readonly string[]).includes(state) ? (state as JobState) : ('waiting' as JobState));
  }

  async retry(queue: string, id: string): Promise<void> {
    const job = await this.queue(queue).getJob(id);
    await job?.retry('failed');
  }

  async remove(queue: string, id: string): Promise<void> {
    await this.queue(queue).remove(id);
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }

  private queue(name: string): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.connection, prefix: this.prefix });
      // Its commands reject to the caller; the emitted copies (connection errors) are logged by the Redis client.
      q.on('error', () => undefined);
      this.queues.set(name, q);
    }
    return q;
  }

  private info(queue: string, job: Job, state: JobState): QueueJobInfo {
    return {
      queue,
      id: String(job.id),
      name: job.name,
      state,
      attemptsMade: job.attemptsMade,
      maxAttempts: job.opts.attempts ?? 1,
      failedReason: job.failedReason || null,
      createdAt: job.timestamp,
      processedAt: job.processedOn ?? null,
      finishedAt: job.finishedOn ?? null,
    };
  }
}
