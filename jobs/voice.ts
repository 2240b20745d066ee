import type { Worker } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { VoiceJobs, VoiceNoteService, VoiceReplyService } from '../server/modules/voice';
import { makeQueue, makeWorker, type QueueEnv } from './bull';
import { PRIORITY, QUEUES, type JobData } from './queues';

/**
 * Producer of the `voice` queue: transcriptions (`voice.transcribe`, job id from the stashed audio, so a
 * note is queued once) and spoken replies (`voice.speak`, job id from the reply). Both are retried with
 * back-off; the services decide what the last attempt tells the user.
 */
export function voiceJobs(env: QueueEnv, attempts: number): VoiceJobs & { close(): Promise<void> } {
  const queue = makeQueue(env, QUEUES.voice);
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
      await queue.add('voice.speak', data satisfies JobData<'voice.speak'>, { ...options, jobId: `speak_${data.messageId}` });
    },
    close: () => queue.close(),
  };
}

/**
 * Worker of the `voice` queue (its own queue and concurrency, so a long note never holds up turns). A
 * thrown error asks BullMQ for another attempt; `lastAttempt` tells the service to finish instead.
 */
export function startVoiceWorker(env: QueueEnv, notes: VoiceNoteService, replies: VoiceReplyService, concurrency: number): Promise<Worker> {
  return makeWorker<'voice.transcribe' | 'voice.speak'>(
    env,
    QUEUES.voice,
    async (job, _token, signal) => {
      const ctx = Ctx.deserialize(job.data.ctx, env.logger, signal);
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (job.name === 'voice.speak') return { outcome: await replies.speak(ctx, job.data as JobData<'voice.speak'>, lastAttempt, signal) };
      return { outcome: await notes.transcribe(ctx, job.data as JobData<'voice.transcribe'>, lastAttempt, signal) };
    },
    { concurrency },
  );
}
