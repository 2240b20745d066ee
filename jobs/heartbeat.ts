import type { Worker } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { BeatRunner, BeatScheduler, BeatScheduleSpec } from '../server/modules/beats';
import { makeQueue, makeWorker, type QueueEnv } from './bull';
import { QUEUES, type JobData } from './queues';

const SCHEDULER_PREFIX = 'beat_';
const KEEP = { removeOnComplete: 200, removeOnFail: 200 };

const schedulerId = (beatId: string) => `${SCHEDULER_PREFIX}${beatId}`;
const oneShotJobId = (beatId: string, at: Date) => `beatat_${beatId}_${at.getTime()}`;

/**
 * Producer of the `heartbeat` queue (DESIGN §2): a beat with a cron expression gets a BullMQ job scheduler
 * (`upsertJobScheduler`, idempotent, kept in Redis across restarts, one job per tick whichever process
 * adds it); a one-shot beat gets a delayed job whose id names the beat and the time, so it is added once.
 */
export function heartbeatJobs(env: QueueEnv): BeatScheduler & { close(): Promise<void> } {
  const queue = makeQueue(env, QUEUES.heartbeat);
  const removeOneShot = async (beat: BeatScheduleSpec) => {
    if (beat.at) await queue.remove(oneShotJobId(beat.id, beat.at)).catch(() => 0);
  };
  return {
    apply: async (beat) => {
      const data: JobData<'beat.run'> = { beatId: beat.id };
      if (!beat.enabled || (!beat.cron && !beat.at)) {
        await queue.removeJobScheduler(schedulerId(beat.id));
        await removeOneShot(beat);
        return;
      }
      if (beat.cron) {
        await queue.upsertJobScheduler(schedulerId(beat.id), { pattern: beat.cron, tz: beat.timezone }, { name: 'beat.run', data, opts: KEEP });
        return;
      }
      await queue.removeJobScheduler(schedulerId(beat.id));
      const delay = beat.at!.getTime() - Date.now();
      if (delay < 0) return;
      await queue.add('beat.run', { ...data, at: beat.at!.getTime() }, { ...KEEP, jobId: oneShotJobId(beat.id, beat.at!), delay });
    },
    remove: async (beat) => {
      await queue.removeJobScheduler(schedulerId(beat.id));
      await removeOneShot(beat);
    },
    scheduledBeatIds: async () => {
      const schedulers = await queue.getJobSchedulers(0, -1);
      return schedulers.map((s) => s.key).filter((k) => k.startsWith(SCHEDULER_PREFIX)).map((k) => k.slice(SCHEDULER_PREFIX.length));
    },
    close: () => queue.close(),
  };
}

/** Worker: runs one tick of a beat; the job id is the tick, so a tick runs once even when retried. */
export function startHeartbeatWorker(env: QueueEnv, runner: BeatRunner, concurrency: number): Promise<Worker> {
  return makeWorker<'beat.run'>(
    env,
    QUEUES.heartbeat,
    async (job, _token, signal) => {
      const ctx = Ctx.system(env.logger, 'beat');
      const run = await runner.runTick(ctx, job.data.beatId, job.id!, signal, job.data.at);
      return { runId: run?.id ?? null };
    },
    { concurrency },
  );
}
