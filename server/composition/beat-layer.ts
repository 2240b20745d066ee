import type { Redis } from 'ioredis';
import type { AppConfig } from '../config';
import type { Clock } from '../common/clock';
import type { Ctx } from '../common/ctx';
import type { Logger } from '../common/logger';
import type { Db } from '../persistence/db';
import type { AgentLoop } from '../modules/agent';
import { BeatRunner, BeatService, BeatSync, BeatTurns, createBeatTools, ResultDelivery, type BeatRunFeed, type BeatScheduler } from '../modules/beats';
import type { NoticeSender } from '../modules/events';
import type { SessionLifecycleService } from '../modules/sessions';
import type { Tool } from '../modules/tools';
import type { UserService } from '../modules/users';
import { RedisBeatRunFeed } from '../redis/redis-beat-run-feed';
import { RedisLock } from '../redis/redis-lock';
import type { QueueEnv } from '../../jobs/bull';
import { heartbeatJobs } from '../../jobs/heartbeat';

/** Beats of one process: the service (GraphQL, tools, /beats), the runner (the heartbeat worker), the start-up sync. */
export interface BeatLayer {
  beats: BeatService;
  runner: BeatRunner;
  sync: BeatSync;
  feed: BeatRunFeed;
  /** The schedules on the heartbeat queue. */
  scheduler: BeatScheduler;
  /** Delivers results of the server's own work (beats, webhooks) to a target or the owner's principal chat. */
  results: ResultDelivery;
  tools: readonly Tool[];
  /** Syncs heartbeats.default.json and the heartbeat queue; one process at a time (a Redis lock). */
  syncAtStart(ctx: Ctx): Promise<void>;
  close(): Promise<void>;
}

const SYNC_LOCK_MS = 30_000;

/**
 * Builds the beats in two steps: `createBeatLayer` before the tools (the beat tools need the service),
 * `attachRunner` once the agent exists (task runs are agent turns).
 */
export function createBeatLayer(deps: { config: AppConfig; logger: Logger; db: Db; users: UserService; queueEnv: QueueEnv; feedSub: Redis; clock: Clock }) {
  const { config, db, clock } = deps;
  const scheduler = heartbeatJobs(deps.queueEnv);
  const beats = new BeatService(
    { db, users: deps.users, scheduler, clock },
    { minIntervalMinutes: config.beats.min_interval_minutes, defaultTimezone: config.beats.timezone },
  );
  const feed = new RedisBeatRunFeed(deps.queueEnv.redis, deps.feedSub, deps.logger.child({ module: 'beats' }), config.redis.prefix);
  const sync = new BeatSync({ db, scheduler, clock }, { file: config.beats.default_file, defaultTimezone: config.beats.timezone });
  return {
    beats,
    tools: createBeatTools(beats),
    attachRunner(more: { agent: AgentLoop; lifecycle: SessionLifecycleService; notices: NoticeSender }): BeatLayer {
      const results = new ResultDelivery({ db, users: deps.users, notices: more.notices });
      const runner = new BeatRunner(
        { db, beats, tasks: new BeatTurns({ db, lifecycle: more.lifecycle, agent: more.agent }), delivery: results, scheduler, feed, clock },
        { maxFailures: () => config.beats.max_failures },
      );
      const lock = new RedisLock(deps.queueEnv.redis, SYNC_LOCK_MS);
      return {
        beats,
        runner,
        sync,
        feed,
        scheduler,
        results,
        tools: createBeatTools(beats),
        syncAtStart: async (ctx) => {
          const key = `${config.redis.prefix}:beats:sync`;
          const deadline = Date.now() + SYNC_LOCK_MS;
          let held = await lock.tryAcquire(key);
          while (!held && Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 100));
            held = await lock.tryAcquire(key);
          }
          try {
            await sync.syncDefaults(ctx);
            await sync.reconcile(ctx);
          } catch (err) {
            ctx.logger.error({ err }, `managed beats were not synced: ${(err as Error).message}`);
          } finally {
            await held?.release();
          }
        },
        close: () => scheduler.close(),
      };
    },
  };
}
