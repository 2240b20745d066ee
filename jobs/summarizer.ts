import type { Worker } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { ExchangeRef, SummarizerService, SummaryJobs } from '../server/modules/summarizer';
import { luaScript } from '../server/redis/lua-script';
import { makeQueue, makeWorker, type QueueEnv } from './bull';
import { QUEUES, type JobData } from './queues';

/** Most exchanges one job condenses; more waiting are left to the next job. */
const MAX_PER_JOB = 20;
/** A waiting list nobody condenses (the session was deleted, summaries turned off) goes after a week. */
const PENDING_TTL_S = 7 * 86_400;

type Pending = Omit<ExchangeRef, 'sessionId'>;

function pendingKey(env: QueueEnv, sessionId: string): string {
  return `${env.prefix}:summarizer:pending:${sessionId}`;
}

/** Appends an exchange (ARGV[1]) to the waiting list KEYS[1], renews its time-to-live (ARGV[2] s), returns the length: one round trip. */
const ADD_PENDING = luaScript(
  'summarizer_add_pending',
  1,
  `local n = redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return n`,
);

const JOB_OPTIONS = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 2000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 86_400, count: 1000 },
} as const;

/**
 * Producer: finished exchanges wait in a Redis list per session; one `summarizer.exchange` job per session
 * (BullMQ deduplication: a delayed one is replaced, so its delay restarts; one arriving while the job runs
 * is kept for after it) condenses what is waiting. Failed model calls are retried with back-off.
 */
export function summaryJobs(env: QueueEnv): SummaryJobs & { close(): Promise<void> } {
  const queue = makeQueue(env, QUEUES.summarizer);
  return {
    addPending: async (_ctx, { sessionId, userMessageIds, replyMessageId }) => {
      const key = pendingKey(env, sessionId);
      return (await ADD_PENDING(env.redis, [key], [JSON.stringify({ userMessageIds, replyMessageId }), PENDING_TTL_S])) as number;
    },
    schedule: async (ctx, sessionId, delayMs) => {
      const data: JobData<'summarizer.exchange'> = { ctx: ctx.serialize(), sessionId };
      await queue.add('summarizer.exchange', data, {
        ...JOB_OPTIONS,
        delay: delayMs,
        deduplication: { id: `summarize:${sessionId}`, replace: true, keepLastIfActive: true },
      });
    },
    close: () => queue.close(),
  };
}

/** Worker: condenses a session's waiting exchanges, then drops them from the list (kept on failure, for the retry). */
export function startSummarizerWorker(
  env: QueueEnv,
  summarizer: SummarizerService,
  concurrency: number,
): Promise<Worker> {
  return makeWorker<'summarizer.exchange'>(
    env,
    QUEUES.summarizer,
    async (job, _token, signal) => {
      const { ctx, sessionId, userMessageIds, replyMessageId } = job.data;
      const key = pendingKey(env, sessionId);
      const raw = userMessageIds && replyMessageId ? [] : await env.redis.lrange(key, 0, MAX_PER_JOB - 1);
      const pending: Pending[] =
        userMessageIds && replyMessageId
          ? [{ userMessageIds, replyMessageId }]
          : raw.map((item) => JSON.parse(item) as Pending);
      const memories = await summarizer.summarizeExchanges(
        Ctx.deserialize(ctx, env.logger, signal).asSystem('summarizer'),
        sessionId,
        pending,
      );
      if (raw.length) await env.redis.ltrim(key, raw.length, -1);
      return { memories, exchanges: pending.length };
    },
    { concurrency },
  );
}
