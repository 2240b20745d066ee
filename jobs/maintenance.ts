import type { Worker } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { HousekeepingService } from '../server/modules/maintenance';
import { makeQueue, makeWorker, type QueueEnv } from './bull';
import { QUEUES, type JobData } from './queues';

const SCHEDULER_ID = 'maintenance';

/**
 * Periodic housekeeping (DESIGN §4): a BullMQ job scheduler adds one `maintenance.run` job every
 * `everyMs` (idempotent across processes and restarts); `runNow` adds one at once.
 */
export function maintenanceJobs(env: QueueEnv, everyMs: number) {
  const queue = makeQueue(env, QUEUES.maintenance);
  const data: JobData<'maintenance.run'> = {};
  const opts = { removeOnComplete: 100, removeOnFail: 100 };
  return {
    schedule: async () => {
      await queue.upsertJobScheduler(SCHEDULER_ID, { every: everyMs }, { name: 'maintenance.run', data, opts });
    },
    runNow: async () => (await queue.add('maintenance.run', data, opts)).id!,
    close: () => queue.close(),
  };
}

/** Worker: one maintenance run (retention, overdue approvals). */
export function startMaintenanceWorker(env: QueueEnv, housekeeping: HousekeepingService): Promise<Worker> {
  return makeWorker<'maintenance.run'>(env, QUEUES.maintenance, async () => housekeeping.run(Ctx.system(env.logger, 'maintenance')), { concurrency: 1 });
}
