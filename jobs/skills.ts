import { randomUUID } from 'node:crypto';
import type { Worker } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { SkillSyncJobs, SkillSyncService } from '../server/modules/skills';
import { makeQueue, makeWorker, type QueueEnv } from './bull';
import { QUEUES, type JobData } from './queues';

/** Producer: one `skills.sync` job per `syncSkills` call; its id is what `jobProgress(jobId)` follows. */
export function skillSyncJobs(env: QueueEnv): SkillSyncJobs & { close(): Promise<void> } {
  const queue = makeQueue(env, QUEUES.skills);
  return {
    enqueueSync: async (ctx) => {
      const data: JobData<'skills.sync'> = { ctx: ctx.serialize() };
      const jobId = `skills-sync-${randomUUID()}`;
      await queue.add('skills.sync', data, { jobId, attempts: 1, removeOnComplete: { age: 3600, count: 100 }, removeOnFail: { age: 86_400, count: 100 } });
      return jobId;
    },
    close: () => queue.close(),
  };
}

/** Worker: syncs the skills folder of this process, reporting `{ done, total }` folders as progress. */
export function startSkillSyncWorker(env: QueueEnv, sync: SkillSyncService): Promise<Worker> {
  return makeWorker<'skills.sync'>(
    env,
    QUEUES.skills,
    async (job, _token, signal) => {
      const ctx = Ctx.deserialize(job.data.ctx, env.logger, signal);
      return sync.sync(ctx, (done, total) => job.updateProgress({ done, total }));
    },
    { concurrency: 1 },
  );
}
