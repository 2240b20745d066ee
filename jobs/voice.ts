import type { Job } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { VoiceJobs, VoiceNoteService, VoiceReplyService } from '../server/modules/voice';
import { makeQueue, makeWorker, type QueueEnv } from './bull';
import { PRIORITY, QUEUES, type JobData } from './queues';

/**
 * Producers of the `voice` queue (transcriptions, `voice.transcribe`, job id from the stashed audio, so a
 * note is queued once) and the `speech` queue (spoken replies, `voice.speak`, job id from the reply): two
 * queues, so slow transcriptions never hold up the voice of a finished reply. Both are retried with
 * back-off; the services decide what the last attempt tells the user.
 */
export function voiceJobs(env: QueueEnv, attempts: number): VoiceJobs & { close(): Promise<void> } {
  const queue = makeQueue(env, QUEUES.voice);
  const speech = makeQueue(env, QUEUES.speech);
  const options = {
    attempts,
    backoff: { type: 'exponential', delay: 1000 },
    priority: PRIORITY.interactive,
    removeOnComplete: { age: 3600, count: 1000 },
    removeOnFail: { age: 86_400, count: 1000 },
  } as const;
  return {
    transcribe: async (data) => {
      await queue.add('voice.transcribe', data satisfies JobData<'voice.transcribe'>, { ...options, jobId: `transcribe_${data.audioId}` });
    },
    speak: async (data) => {
      await speech.add('voice.speak', data satisfies JobData<'voice.speak'>, { ...options, jobId: `speak_${data.messageId}` });
    },
    close: async () => {
      await Promise.all([queue.close(), speech.close()]);
    },
  };
}

/**
 * Workers of the `voice` and `speech` queues (their own queues and concurrency, so a long note never holds
 * up turns). A thrown error asks BullMQ for another attempt; `lastAttempt` tells the service to finish
 * instead. Resolves to the two workers' closer.
 */
export async function startVoiceWorkers(env: QueueEnv, notes: VoiceNoteService, replies: VoiceReplyService, concurrency: number): Promise<{ close(): Promise<void> }> {
  const lastAttempt = (job: Job) => job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  const transcribe = await makeWorker<'voice.transcribe'>(
    env,
    QUEUES.voice,
    async (job, _token, signal) => ({ outcome: await notes.transcribe(Ctx.deserialize(job.data.ctx, env.logger, signal), job.data, lastAttempt(job), signal) }),
    { concurrency },
  );
  const speak = await makeWorker<'voice.speak'>(
    env,
    QUEUES.speech,
    async (job, _token, signal) => ({ outcome: await replies.speak(Ctx.deserialize(job.data.ctx, env.logger, signal), job.data, lastAttempt(job), signal) }),
    { concurrency },
  );
  return {
    close: async () => {
      await Promise.all([transcribe.close(), speak.close()]);
    },
  };
}
