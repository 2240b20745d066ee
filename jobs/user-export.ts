import type { Worker } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { UserDataService, UserExportJobs } from '../server/modules/userdata';
import { makeQueue, makeWorker, type QueueEnv } from './bull';
import { QUEUES, type JobData } from './queues';

/** Producer: one `user.export` job per `exportUserData` call (job id `export-<exportId>`, followed by `jobProgress`). */
export function userExportJobs(env: QueueEnv): UserExportJobs & { close(): Promise<void> } {
  const queue = makeQueue(env, QUEUES.exports);
  return {
    enqueueExport: async (ctx, exportId, userId) => {
      const data: JobData<'user.export'> = { ctx: ctx.serialize(), exportId, userId };
      const jobId = `export-${exportId}`;
      await queue.add('user.export', data, { jobId, attempts: 2, backoff: { type: 'fixed', delay: 2000 }, removeOnComplete: { age: 86_400, count: 200 }, removeOnFail: { age: 86_400, count: 200 } });
      return jobId;
    },
    close: () => queue.close(),
  };
}

/** Worker: builds the archive, reporting `{ done, total }` tables as progress. */
export function startUserExportWorker(env: QueueEnv, service: UserDataService): Promise<Worker> {
  return makeWorker<'user.export'>(
    env,
    QUEUES.exports,
    async (job, _token, signal) => {
      const ctx = Ctx.deserialize(job.data.ctx, env.logger, signal);
      return service.buildExport(ctx, job.data.exportId, job.data.userId, (done, total) => job.updateProgress({ done, total }));
    },
    { concurrency: 1 },
  );
}
