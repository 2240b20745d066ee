import type { Worker } from 'bullmq';
import type { AppConfig } from '../config';
import { Ctx } from '../common/ctx';
import { DisposableStack } from '../common/disposable';
import type { Logger } from '../common/logger';
import type { Db } from '../persistence/db';
import { ChannelSwitch } from '../channels/policies/channel-switch';
import { ReplyRedelivery } from '../modules/agent';
import { TurnAbortedError } from '../modules/conversation';
import type { PluginSettingService } from '../modules/plugins';
import { startMaintenanceWorker } from '../../jobs/maintenance';
import { startOutboundWorker } from '../../jobs/outbound';
import { startSummarizerWorker } from '../../jobs/summarizer';
import { startTurnWorker } from '../../jobs/turns';
import { startHeartbeatWorker } from '../../jobs/heartbeat';
import { startSkillSyncWorker } from '../../jobs/skills';
import { startIngestWorker } from '../../jobs/ingest';
import { startVoiceWorkers } from '../../jobs/voice';
import { startMemoryReindexWorker } from '../../jobs/memory';
import { sharedConnectionEnv } from '../../jobs/bull';
import type { ChatServices } from './chat-services';
import type { MemoryLayer } from './memory-layer';

/** How often a worker process looks for sessions whose messages wait longer than STALE_PENDING_MS. */
const SWEEP_EVERY_MS = 15_000;
const STALE_PENDING_MS = 30_000;

/** Exchanges summarized at once per worker process (background work). */
const SUMMARIZER_CONCURRENCY = 2;

export interface WorkerDeps {
  config: AppConfig;
  logger: Logger;
  db: Db;
  memory?: MemoryLayer;
}

/** The workers of a process: those a turn needs are running; the rest start in the background. */
export interface ChatWorkers {
  /** Stops them all (turns first, so running turns stay pending for the next start). */
  stack: DisposableStack;
  /**
   * Resolves once the background workers run too (summarizer, maintenance, heartbeat, voice, skill sync,
   * memory re-index, ingest; and whatever `later` adds). Rejects when one of them failed to start; what did
   * start is on `stack` all the same.
   */
  background: Promise<void>;
}

/**
 * Runs the queue workers of this process (roles `all` and `worker`). Resolves once a turn can be taken:
 * the turn and model-call workers run, heartbeats.default.json and the skills folder are synced, and what
 * a dead predecessor left pending is answered. The background workers start meanwhile (`background`): no
 * turn waits for them, and their jobs wait in Redis until they run.
 */
export async function startChatWorkers(chat: ChatServices, deps: WorkerDeps): Promise<ChatWorkers> {
  const { config, logger } = deps;
  const env = chat.queueEnv;
  const stack = new DisposableStack();
  const stopAborts = await chat.turnControl.listen(chat.running, (req) => logger.info({ sessionId: req.sessionId, reason: req.reason }, 'turn aborted'));
  // Replies a dead predecessor stored but did not hand over go into their mailboxes before any new turn
  // runs here, so a chat gets them before the replies that follow them.
  await new ReplyRedelivery(deps.db, chat.outbound).recover(Ctx.system(logger, 'redelivery'));
  const turnWorker = await startTurnWorker(env, chat.turnRunner, config.queues.turn_concurrency, chat.liveness);
  const direct = chat.turnControl.direct;
  stack.add('turn worker', async () => {
    chat.running.abortAll('shutdown');
    direct?.abort(TurnAbortedError.SHUTDOWN);
    await Promise.all([turnWorker.close(), direct?.close()]);
    await stopAborts();
  });
  stack.add('model workers', await chat.modelQueues.startWorkers(chat.models));
  // Stopped after the running turns had their time, like the turn path's own workers.
  const background = new DisposableStack();
  stack.add('background workers', () => background.dispose((name, err) => logger.error({ err, resource: name }, 'error while stopping')));
  try {
    // Start-up syncs (the /readyz contract: beats and skills are there once ready).
    await chat.beats.syncAtStart(Ctx.system(logger, 'beats'));
    await chat.skills.startWatching(Ctx.system(logger, 'skills'));
    stack.add('skills watcher', () => chat.skills.stopWatching());
    await chat.turns.recoverPending(logger);
  } catch (err) {
    await stack.dispose((name, e) => logger.error({ err: e, resource: name }, 'error while stopping'));
    throw err;
  }
  // From here on, a message stored in this process is answered here at once while a slot is free; the
  // sweep looks again at sessions whose messages wait too long (their process died mid-turn).
  direct?.attach(chat.turnRunner, config.queues.turn_concurrency);
  const sweep = setInterval(() => void chat.turns.recoverStale(logger, STALE_PENDING_MS).catch((err: Error) => logger.warn({ err: err.message }, 'stale-session sweep failed')), SWEEP_EVERY_MS);
  sweep.unref();
  stack.add('stale-session sweep', () => clearInterval(sweep));
  void deps.memory?.startBackground(Ctx.system(logger, 'memory'));
  // Registered last, so it runs first on shutdown, while the model-call workers still serve the turns.
  stack.add('running turns', () => finishRunningTurns(turnWorker, chat, config.shutdown_timeout_ms, logger));
  return { stack, background: startBackgroundWorkers(chat, deps, background) };
}

/**
 * The workers no turn waits for. They do not depend on each other: they connect at the same time, and their
 * regular commands share the producers' connection (each still has its own blocking connection), which
 * saves a connection, its handshake and its copy of BullMQ's scripts per worker.
 */
async function startBackgroundWorkers(chat: ChatServices, deps: WorkerDeps, stack: DisposableStack): Promise<void> {
  const { config } = deps;
  const env = sharedConnectionEnv(chat.queueEnv);
  const closer = (name: string, close: () => Promise<void>) => ({ name, close });
  const started = await Promise.allSettled([
    startMaintenanceWorker(env, chat.housekeeping).then((w) => closer('maintenance worker', () => w.close())),
    // A summary under way is handed back (its model call may wait out the background grace): the job is
    // retried by the next worker, and the waiting exchanges stay listed until a summary of them is stored.
    startSummarizerWorker(env, chat.summarizer, SUMMARIZER_CONCURRENCY).then((w) => closer('summarizer worker', () => (w.cancelAllJobs('shutdown'), w.close()))),
    startHeartbeatWorker(env, chat.beats.runner, config.beats.concurrency).then((w) => closer('heartbeat worker', () => w.close())),
    startVoiceWorkers(env, chat.voice.notes, chat.voice.replies, config.voice.concurrency).then((w) => closer('voice workers', () => w.close())),
    startSkillSyncWorker(env, chat.skills.sync).then((w) => closer('skill sync worker', () => w.close())),
    deps.memory ? startMemoryReindexWorker(env, deps.memory.indexer).then((w) => closer('memory re-index worker', () => w.close())) : null,
    chat.documents ? startIngestWorker(env, chat.documents.ingest, config.documents.ingest_concurrency).then((w) => closer('ingest worker', () => w.close())) : null,
    chat.maintenance.schedule().then(() => null),
  ]);
  for (const result of started) {
    if (result.status === 'fulfilled' && result.value) stack.add(result.value.name, result.value.close);
  }
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Stops taking turn jobs and lets the running ones finish; those still running after `timeoutMs` are
 * aborted with the shutdown reason, which leaves their messages pending for the next worker.
 */
async function finishRunningTurns(worker: Worker, chat: ChatServices, timeoutMs: number, logger: Logger): Promise<void> {
  if (chat.running.size) logger.info({ turns: chat.running.size, timeoutMs }, 'waiting for running turns to finish');
  const timer = setTimeout(() => {
    if (!chat.running.size) return;
    logger.warn({ turns: chat.running.size }, 'running turns did not finish in time: handing them back to the queue');
    chat.running.abortAll(TurnAbortedError.SHUTDOWN);
    chat.turnControl.direct?.abort(TurnAbortedError.SHUTDOWN);
  }, timeoutMs);
  try {
    await Promise.all([worker.close(), chat.turnControl.direct?.close()]);
  } finally {
    clearTimeout(timer);
  }
}

export interface ChannelDeps {
  plugins: PluginSettingService;
  logger: Logger;
  config: AppConfig;
  /** Whether this process may hold channels (`channels.run_on`); else it only follows their settings. */
  contend: boolean;
}

/**
 * Follows the `channel:<name>` plugin settings in this process: a channel that is on is started here when
 * this process takes its cluster-wide lease (one holder per channel), and the holder also serves the
 * channel's outbound queue. Independent of the worker role: API processes can hold channels too.
 */
export async function startChatChannels(chat: ChatServices, deps: ChannelDeps): Promise<DisposableStack> {
  const { config } = deps;
  const stack = new DisposableStack();
  const outbound = new Map<string, Promise<Worker>>();
  const stopOutbound = async (channel: string) => {
    const worker = outbound.get(channel);
    outbound.delete(channel);
    await (await worker)?.close();
  };
  const unlisten = chat.channels.onLifecycle(async (channel, started) => {
    if (!started) {
      await chat.delivery.channelStopping(channel);
      return stopOutbound(channel);
    }
    if (outbound.has(channel) || chat.channels.get(channel)?.delivery === 'session-events') return;
    outbound.set(
      channel,
      startOutboundWorker(chat.queueEnv, chat.delivery, config.queues.outbound_concurrency, channel),
    );
    await outbound.get(channel);
    // Mailboxes a dead holder of the channel was serving (they have no queue job).
    await chat.delivery.channelStarted(channel);
  });
  stack.add('outbound workers', async () => {
    unlisten();
    for (const channel of [...outbound.keys()]) await stopOutbound(channel);
  });
  stack.add('channels', () => chat.channels.stopAll());
  const channelSwitch = new ChannelSwitch({
    registry: chat.channels,
    settings: deps.plugins,
    sink: (m) => chat.pipeline.handle(m).then(() => undefined),
    logger: deps.logger.child({ module: 'channels' }),
    leases: chat.channelLeases,
    contend: deps.contend,
    transports: chat.channelSetupSync,
  });
  // A set-up stored by this process applies at once; other processes see it at their next read.
  const unwatch = chat.channelSetups.onChange(() => void channelSwitch.reconcile());
  await channelSwitch.start();
  stack.add('channel switch', async () => {
    unwatch();
    await channelSwitch.stop();
  });
  return stack;
}
