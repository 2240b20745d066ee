import type { Worker } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { TurnJobs, TurnRunner } from '../server/modules/conversation';
import { delayJob, keepReclaiming, makeQueue, makeWorker, type ProcessIdentity, type QueueEnv } from './bull';
import { QUEUES, type JobData } from './queues';

/**
 * How long a drain job that found its session busy waits before it looks again. The holder itself
 * schedules the session again when messages are left after its drain, so this is only the safety net
 * for a holder that died.
 */
const BUSY_RETRY_MS = 2000;

/** Producer: one `turn.drain` job per inbound message (the mailbox itself is the database). */
export function turnJobs(env: QueueEnv): TurnJobs & { close(): Promise<void> } {
  const queue = makeQueue(env, QUEUES.turns);
  return {
    schedule: async (sessionId, messageId) => {
      const data: JobData<'turn.drain'> = { ctx: Ctx.system(env.logger, 'turn').serialize(), sessionId, messageId };
      await queue.add('turn.drain', data, {
        removeOnComplete: 1000,
        removeOnFail: 1000,
        attempts: 3,
        backoff: { type: 'exponential', delay: 500 },
        // At most one drain job per session waits and one runs: a message stored while one waits is
        // drained by it; one stored while a drain runs gets a single follow-up job, added behind the
        // other sessions' jobs when that drain ends. No second job finds the session busy and spins.
        deduplication: { id: `drain:${sessionId}`, keepLastIfActive: true },
      });
    },
    close: () => queue.close(),
  };
}

/**
 * Worker: drains the job's session; a session with messages left goes to the back of the queue (a new
 * job), so sessions take turns; a busy session is looked at again later. Named after this process, so
 * a successor hands back at once the drains it was running when it died (each session has one drain
 * job at a time, and new messages wait behind it).
 */
export async function startTurnWorker(env: QueueEnv, runner: TurnRunner, concurrency: number, liveness?: ProcessIdentity): Promise<Worker> {
  const again = turnJobs(env);
  const inspect = makeQueue(env, QUEUES.turns);
  const stopReclaim = liveness ? await keepReclaiming(env, () => [inspect], liveness, 'turn drains') : null;
  const worker = await makeWorker<'turn.drain'>(
    env,
    QUEUES.turns,
    async (job, token, signal) => {
      const ctx = Ctx.deserialize(job.data.ctx, env.logger, signal);
      const outcome = await runner.drain(ctx, job.data.sessionId, signal);
      if (outcome.status === 'busy') return delayJob(job, token, Date.now() + BUSY_RETRY_MS);
      if (outcome.more) await again.schedule(job.data.sessionId, '');
      return { turns: outcome.turns };
    },
    { concurrency, maxStalledCount: 10, ...(liveness ? { name: liveness.id } : {}) },
  );
  const close = worker.close.bind(worker);
  worker.close = async (force?: boolean) => {
    stopReclaim?.();
    await close(force);
    await again.close();
    await inspect.close();
  };
  return worker;
}
