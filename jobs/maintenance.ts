import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { Ctx } from '../server/common/ctx';
import type { Logger } from '../server/common/logger';
import { QUEUES, type JobData, type JobResult } from './queues';

export interface MaintenanceQueueOptions {
  prefix: string;
  /** How often the scheduler adds a `maintenance.run` job. */
  everyMs: number;
  logger: Logger;
}

/** What one maintenance run does (the composition root wires the services). */
export interface MaintenanceTasks {
  run(ctx: Ctx): Promise<JobResult<'maintenance.run'>>;
}

const SCHEDULER_ID = 'maintenance';

/**
 * Periodic housekeeping on the `maintenance` queue (DESIGN §4): a BullMQ job scheduler adds one
 * `maintenance.run` job every `everyMs` (idempotent across processes and restarts), and the worker
 * runs the tasks: pruning archived sessions past `session.retention_days`, expiring overdue tool
 * approvals.
 */
export class MaintenanceQueue {
  private readonly queue: Queue;

  constructor(
    redis: Redis,
    private readonly options: MaintenanceQueueOptions,
  ) {
    this.queue = new Queue(QUEUES.maintenance, { connection: redis, prefix: `${options.prefix}:bull` });
  }

  /** Creates or updates the repeating schedule. */
  async schedule(): Promise<void> {
    const data: JobData<'maintenance.run'> = {};
    await this.queue.upsertJobScheduler(
      SCHEDULER_ID,
      { every: this.options.everyMs },
      { name: 'maintenance.run', data, opts: { removeOnComplete: 100, removeOnFail: 100 } },
    );
  }

  /** Adds one run now (besides the schedule); returns the job id. */
  async runNow(): Promise<string> {
    const data: JobData<'maintenance.run'> = {};
    const job = await this.queue.add('maintenance.run', data, { removeOnComplete: 100, removeOnFail: 100 });
    return job.id!;
  }

  async startWorker(tasks: MaintenanceTasks, workerConnection: Redis): Promise<() => Promise<void>> {
    const { logger } = this.options;
    const worker = new Worker<JobData<'maintenance.run'>, JobResult<'maintenance.run'>>(
      QUEUES.maintenance,
      async (_job: Job<JobData<'maintenance.run'>>) => tasks.run(Ctx.system(logger, 'maintenance')),
      { connection: workerConnection, prefix: `${this.options.prefix}:bull`, concurrency: 1 },
    );
    worker.on('failed', (_job, err) => logger.error({ err }, 'maintenance run failed'));
    worker.on('error', (err) => logger.error({ err }, 'maintenance worker error'));
    await worker.waitUntilReady();
    return () => worker.close();
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
