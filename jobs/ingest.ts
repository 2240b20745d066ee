import { randomUUID } from 'node:crypto';
import type { Worker } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { DocumentIngestJobs, DocumentIngestService } from '../server/modules/documents';
import { makeQueue, makeWorker, type QueueEnv } from './bull';
import { QUEUES, type JobData } from './queues';

/** Producer: one `document.ingest` job per added or re-indexed document; its id is what `jobProgress` follows. */
export function ingestJobs(env: QueueEnv): DocumentIngestJobs & { close(): Promise<void> } {
  const queue = makeQueue(env, QUEUES.ingest);
  return {
    enqueueIngest: async (ctx, documentId) => {
      const data: JobData<'document.ingest'> = { ctx: ctx.serialize(), documentId };
      const jobId = `ingest-${documentId}-${randomUUID().slice(0, 8)}`;
      await queue.add('document.ingest', data, { jobId, attempts: 1, removeOnComplete: { age: 3600, count: 1000 }, removeOnFail: { age: 86_400, count: 1000 } });
      return jobId;
    },
    close: () => queue.close(),
  };
}

/** Worker: ingests one document (the work runs on an extraction thread; this only waits), reporting percent done. */
export function startIngestWorker(env: QueueEnv, ingest: DocumentIngestService, concurrency: number): Promise<Worker> {
  return makeWorker<'document.ingest'>(
    env,
    QUEUES.ingest,
    async (job, _token, signal) => {
      const ctx = Ctx.deserialize(job.data.ctx, env.logger, signal);
      return ingest.ingest(ctx, job.data.documentId, (percent) => job.updateProgress(percent));
    },
    { concurrency },
  );
}
