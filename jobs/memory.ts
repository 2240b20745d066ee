import { randomUUID } from 'node:crypto';
import type { Worker } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { MemoryIndexer, MemoryReindexJobs } from '../server/modules/memory';
import { makeQueue, makeWorker, type QueueEnv } from './bull';
import { QUEUES, type JobData } from './queues';

/** Producer: one `memory.reindex` job per `reindexMemories` call; its id is what `jobProgress(jobId)` follows. */
export function memoryReindexJobs(env: QueueEnv): MemoryReindexJobs & { close(): Promise<void> } {
  const queue = makeQueue(env, QUEUES.memory);
  return {
    enqueueReindex: async (ctx, userId) => {
      const data: JobData<'memory.reindex'> = { ctx: ctx.serialize(), userId };
      const jobId = `memory-reindex-${randomUUID()}`;
      await queue.add('memory.reindex', data, { jobId, attempts: 1, removeOnComplete: { age: 3600, count: 100 }, removeOnFail: { age: 86_400, count: 100 } });
      return jobId;
    },
    close: () => queue.close(),
  };
}

/** Worker: re-indexes the memories through the indexer, reporting `{ done, total }` memories as progress. */
export function startMemoryReindexWorker(env: QueueEnv, indexer: MemoryIndexer): Promise<Worker> {
  return makeWorker<'memory.reindex'>(
    env,
    QUEUES.memory,
    async (job, _token, signal) => {
      const ctx = Ctx.deserialize(job.data.ctx, env.logger, signal);
      return indexer.reindex(ctx, job.data.userId, (done, total) => job.updateProgress({ done, total }), signal);
    },
    { concurrency: 1 },
  );
}
