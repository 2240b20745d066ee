import type { Redis } from 'ioredis';
import type { AppConfig } from '../config';
import type { Clock } from '../common/clock';
import type { Ctx } from '../common/ctx';
import type { Logger } from '../common/logger';
import type { Db } from '../persistence/db';
import type { AgentLoop } from '../modules/agent';
import path from 'node:path';
import { BeatKind, BeatRunner, BeatService, BeatSync, BeatTurns, checkCron, createBeatTools, NATIVE_BEATS, ResultDelivery, type BeatRunFeed, type ResultChannels, type BeatScheduler, type DefaultBeat, type NativeBeatTasks } from '../modules/beats';
import { BackupService } from '../modules/backup';
import { sqliteFilePath } from '../persistence/data-source';
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
  /** Runs a text as a turn of a user in a session of its own (beats; webhooks may use `runAs`). */
  turns: BeatTurns;
  tools: readonly Tool[];
  /** Syncs heartbeats.default.json and the heartbeat queue; one process at a time (a Redis lock). */
  syncAtStart(ctx: Ctx): Promise<void>;
  close(): Promise<void>;
}

const SYNC_LOCK_MS = 30_000;

/** `backup.enabled`: the managed beat `__backup__` on `backup.cron` (removed again when turned off). */
function builtInBeats(config: AppConfig, logger: Logger): DefaultBeat[] {
  if (!config.backup.enabled) return [];
  const timezone = config.beats.timezone;
  try {
    const cron = checkCron(config.backup.cron, timezone);
    return [{ name: NATIVE_BEATS.backup, kind: BeatKind.TASK, text: 'Built in: a scheduled backup (backup.* in the config).', cron, at: null, timezone, targetChannel: null, targetChatId: null, enabled: true }];
  } catch (err) {
    logger.error({ err: (err as Error).message }, `backup.cron "${config.backup.cron}" is not a valid cron expression; scheduled backups are off until it is fixed`);
    return [];
  }
}

/** The work of built-in beats: scheduled backups into `backup.dir` (default `<data_dir>/backups`), keeping `backup.keep`. */
function nativeBeatTasks(config: AppConfig): NativeBeatTasks {
  const service = new BackupService({ dataDir: config.data_dir, sqliteFile: sqliteFilePath(config), databaseUrl: config.database.url });
  return {
    backup: (_ctx) => service.createScheduled(config.backup.dir ? path.resolve(config.backup.dir) : path.join(config.data_dir, 'backups'), config.backup.keep),
  };
}

/**
 * Builds the beats in two steps: `createBeatLayer` before the tools (the beat tools need the service),
 * `attachRunner` once the agent exists (task runs are agent turns).
 */
export function createBeatLayer(deps: { config: AppConfig; logger: Logger; db: Db; users: UserService; queueEnv: QueueEnv; feedSub: Redis; clock: Clock; channels: ResultChannels; notices: NoticeSender }) {
  const { config, db, clock } = deps;
  const scheduler = heartbeatJobs(deps.queueEnv);
  const beats = new BeatService(
    { db, users: deps.users, scheduler, clock, channels: deps.channels },
    { minIntervalMinutes: config.beats.min_interval_minutes, defaultTimezone: config.beats.timezone },
  );
  const feed = new RedisBeatRunFeed(deps.queueEnv.redis, deps.feedSub, deps.logger.child({ module: 'beats' }), config.redis.prefix);
  const tools = createBeatTools(beats);
  const sync = new BeatSync({ db, scheduler, clock }, { file: config.beats.default_file, defaultTimezone: config.beats.timezone, builtIn: () => builtInBeats(config, deps.logger) });
  const results = new ResultDelivery({ db, users: deps.users, notices: deps.notices, channels: deps.channels });
  return {
    beats,
    tools,
    results,
    attachRunner(more: { agent: AgentLoop; lifecycle: SessionLifecycleService }): BeatLayer {
      const turns = new BeatTurns({ db, lifecycle: more.lifecycle, agent: more.agent });
      const runner = new BeatRunner(
        { db, beats, tasks: turns, delivery: results, scheduler, feed, clock, natives: nativeBeatTasks(config) },
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
        turns,
        tools,
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
