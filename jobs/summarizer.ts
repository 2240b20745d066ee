import type { Worker } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import type { ExchangeRef, SummarizerService, SummaryJobs } from '../server/modules/summarizer';
import { luaScript } from '../server/redis/lua-script';
import { delayJob, makeQueue, makeWorker, type QueueEnv } from './bull';
import { QUEUES, type JobData } from './queues';

/** Most exchanges one job condenses; more waiting are left to the next job. */
const MAX_PER_JOB = 20;
/** A waiting list nobody condenses (the session was deleted, summaries turned off) goes after a week. */
const PENDING_TTL_S = 7 * 86_400;

/** A waiting exchange; `at` (ms epoch) is when it was added (absent on entries from before it was kept). */
type Pending = Omit<ExchangeRef, 'sessionId'> & { at?: number };

function pendingKey(env: QueueEnv, sessionId: string): string {
  return `${env.prefix}:summarizer:pending:${sessionId}`;
}

/**
 * Appends an exchange (ARGV[1]) to the waiting list KEYS[1] and renews its time-to-live (ARGV[2] s); returns
 * the length and where the session's next summarizer job stands: 0 none (none waits, or only a running one,
 * which may have read the list already), 1 delayed, 2 due. KEYS[2] is the session's deduplication key (it
 * names the job), KEYS[3] the queue's active list, KEYS[4] its delayed set, KEYS[5] the job kept to run
 * after the running one (BullMQ's keepLastIfActive); ARGV[3] prefixes the job keys. One round trip.
 */
const ADD_PENDING = luaScript(
  'summarizer_add_pending',
  5,
  `local n = redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
local job = redis.call('GET', KEYS[2])
if not job or redis.call('EXISTS', ARGV[3] .. job) == 0 then return {n, 0} end
if redis.call('LPOS', KEYS[3], job) then
  local opts = redis.call('HGET', KEYS[5], 'opts')
  if not opts then return {n, 0} end
  local delay = tonumber(cjson.decode(opts)['delay'] or 0)
  if delay and delay > 0 then return {n, 1} end
  return {n, 2}
end
if redis.call('ZSCORE', KEYS[4], job) then return {n, 1} end
return {n, 2}`,
);

const JOB_STATES = ['none', 'later', 'now'] as const;

function dedupId(sessionId: string): string {
  return `summarize:${sessionId}`;
}

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
      const entry: Pending = { userMessageIds, replyMessageId, at: Date.now() };
      const jobs = `${env.prefix}:bull:${QUEUES.summarizer}:`;
      const keys = [pendingKey(env, sessionId), `${jobs}de:${dedupId(sessionId)}`, `${jobs}active`, `${jobs}delayed`, `${jobs}dn:${dedupId(sessionId)}`];
      const [waiting, state] = (await ADD_PENDING(env.redis, keys, [JSON.stringify(entry), PENDING_TTL_S, jobs])) as [number, 0 | 1 | 2];
      return { waiting, job: JOB_STATES[state] };
    },
    schedule: async (ctx, sessionId, delayMs, quietMs) => {
      const data: JobData<'summarizer.exchange'> = { ctx: ctx.serialize(), sessionId, ...(quietMs ? { quietMs } : {}) };
      await queue.add('summarizer.exchange', data, {
        ...JOB_OPTIONS,
        delay: delayMs,
        deduplication: { id: dedupId(sessionId), replace: true, keepLastIfActive: true },
      });
    },
    close: () => queue.close(),
  };
}

/**
 * Worker: condenses a session's waiting exchanges, then drops them from the list (kept on failure, for the
 * retry). A job waiting for the session to go quiet (`quietMs`) that finds a newer exchange waits on.
 */
export function startSummarizerWorker(
  env: QueueEnv,
  summarizer: SummarizerService,
  concurrency: number,
): Promise<Worker> {
  return makeWorker<'summarizer.exchange'>(
    env,
    QUEUES.summarizer,
    async (job, token, signal) => {
      const { ctx, sessionId, userMessageIds, replyMessageId, quietMs } = job.data;
      const key = pendingKey(env, sessionId);
      const raw = userMessageIds && replyMessageId ? [] : await env.redis.lrange(key, 0, MAX_PER_JOB - 1);
      const pending: Pending[] =
        userMessageIds && replyMessageId
          ? [{ userMessageIds, replyMessageId }]
          : raw.map((item) => JSON.parse(item) as Pending);
      const quietAt = quietMs && raw.length < MAX_PER_JOB ? (pending.at(-1)?.at ?? 0) + quietMs : 0;
      if (quietAt > Date.now()) return delayJob(job, token, quietAt);
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
