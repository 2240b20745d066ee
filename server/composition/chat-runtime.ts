import type { AppConfig } from '../config';
import { SYSTEM_CLOCK, type Clock } from '../common/clock';
import { DisposableStack } from '../common/disposable';
import type { Logger } from '../common/logger';
import type { SecretRedactor } from '../common/secret-redactor';
import type { Db } from '../persistence/db';
import type { RedisConnections } from '../redis/redis-connections';
import { RedisSessionEvents } from '../redis/redis-session-events';
import { ChannelRegistry } from '../channels/channel-registry';
import { ChannelSwitch } from '../channels/policies/channel-switch';
import { ChannelDirectReplier } from '../channels/direct-replier';
import { InboundPipeline, REFUSE_UNKNOWN, type Deduper, type SenderPolicy } from '../channels/inbound-pipeline';
import { WebChannel } from '../channels/web/web-channel';
import { AgentLoop } from '../modules/agent/agent-loop';
import { NO_MEMORIES, NO_SKILLS } from '../modules/agent/agent.ports';
import type { AuditService } from '../modules/audit';
import type { MemoryService } from '../modules/memory';
import type { MemoryLayer } from './memory-layer';
import { AutoSummarizer, CompactionService, CompactionValve, registerSummaryCommands, SummarizerService } from '../modules/summarizer';
import type { PluginSettingService } from '../modules/plugins';
import { createToolLayer, type ToolLayer } from './tool-layer';
import { createChannelTransports } from './channel-transports';
import { createSenderPolicies } from './sender-policies';
import { ModelCallExecutor } from '../modules/agent/model-call-executor';
import { ReplyRedelivery } from '../modules/agent/reply-redelivery';
import { Ctx } from '../common/ctx';
import { SlashCommandService } from '../modules/commands';
import { PairingService, registerPairingCommands } from '../modules/pairing';
import { RunningTurns, TurnService } from '../modules/conversation';
import { estimateMessages, ModelRouter } from '../modules/models';
import { SessionExpiryService, SessionLifecycleService, SessionMaintenanceService, type SessionService } from '../modules/sessions';
import { UsageService } from '../modules/usage';
import type { UserService } from '../modules/users';
import { ModelCallQueue } from '../../jobs/model-calls';
import { OutboundQueue } from '../../jobs/outbound';
import { TurnQueue } from '../../jobs/turns';
import { MaintenanceQueue } from '../../jobs/maintenance';
import { SummarizerQueue } from '../../jobs/summarizer';
import { RedisSessionLock } from '../../jobs/session-lock';

export interface ChatRuntimeDeps {
  config: AppConfig;
  logger: Logger;
  redactor: SecretRedactor;
  db: Db;
  redis: RedisConnections;
  users: UserService;
  sessions: SessionService;
  audit: AuditService;
  plugins: PluginSettingService;
  memories: MemoryService;
  /** Recall, memory tools and /memories; without it the agent recalls nothing. */
  memory?: MemoryLayer;
  /** Optional overrides, e.g. a model router built around a test provider. */
  router?: ModelRouter;
  /** Time for session resets and retention; tests move it forward. @default SYSTEM_CLOCK */
  clock?: Clock;
}

/** How often the maintenance job runs (retention, overdue approvals). */
const MAINTENANCE_EVERY_MS = 3_600_000;
/** Exchanges summarized at once per worker process (background work). */
const SUMMARIZER_CONCURRENCY = 2;

/**
 * Everything that answers messages: queues, model router, agent, inbound pipeline and channels. Built
 * once per process by the composition root; `startWorkers` runs the queue workers in this process
 * (roles `all` and `worker`).
 */
export class ChatRuntime {
  private readonly stack = new DisposableStack();
  private workersStarted = false;

  private constructor(
    private readonly deps: ChatRuntimeDeps,
    readonly router: ModelRouter,
    readonly events: RedisSessionEvents,
    readonly lifecycle: SessionLifecycleService,
    readonly usage: UsageService,
    readonly running: RunningTurns,
    readonly turnQueue: TurnQueue,
    readonly modelQueue: ModelCallQueue,
    readonly outbound: OutboundQueue,
    readonly channels: ChannelRegistry,
    readonly tools: ToolLayer,
    readonly turns: TurnService,
    readonly agent: AgentLoop,
    readonly commands: SlashCommandService,
    readonly pipeline: InboundPipeline,
    readonly web: WebChannel,
    private readonly policies: Map<string, SenderPolicy>,
    readonly sessionMaintenance: SessionMaintenanceService,
    readonly maintenance: MaintenanceQueue,
    readonly summarizer: SummarizerService,
    readonly summarizerQueue: SummarizerQueue,
    readonly compaction: CompactionService,
  ) {}

  static async create(deps: ChatRuntimeDeps): Promise<ChatRuntime> {
    const { config, logger, redis, db } = deps;
    const prefix = config.redis.prefix;
    const main = redis.create('chat');
    const eventsSub = redis.create('events-sub');
    await redis.waitReady();
    const router =
      deps.router ??
      (await ModelRouter.fromConfig(config.ai, { logger: logger.child({ module: 'models' }), redactor: deps.redactor, sensitiveLogs: config.log.sensitive }));
    deps.memory?.useEmbeddings(router);
    const events = new RedisSessionEvents(main, eventsSub, logger.child({ module: 'events' }), { prefix });
    const clock = deps.clock ?? SYSTEM_CLOCK;
    const lifecycle = new SessionLifecycleService(db, clock);
    const usage = new UsageService(db);
    const running = new RunningTurns();
    const turnQueue = new TurnQueue(main, {
      prefix,
      lockMs: config.queues.turn_lock_ms,
      concurrency: config.queues.turn_concurrency,
      stalledIntervalMs: config.queues.stalled_interval_ms,
      logger: logger.child({ module: 'turns' }),
    });
    const modelQueue = new ModelCallQueue(router, main, {
      prefix,
      lockMs: config.queues.turn_lock_ms,
      stalledIntervalMs: config.queues.stalled_interval_ms,
      maxRetries: config.ai.max_retries,
      backgroundGraceMs: config.ai.background_grace_ms,
      logger: logger.child({ module: 'model-calls' }),
      connect: (name) => redis.create(name),
    });
    await modelQueue.init();
    const channels = new ChannelRegistry(logger.child({ module: 'channels' }));
    const outbound = new OutboundQueue(main, channels, {
      prefix,
      lockMs: config.queues.turn_lock_ms,
      stalledIntervalMs: config.queues.stalled_interval_ms,
      concurrency: config.queues.outbound_concurrency,
      attempts: config.queues.outbound_attempts,
      logger: logger.child({ module: 'outbound' }),
    });
    const tools = createToolLayer({ config, db, audit: deps.audit, plugins: deps.plugins, users: deps.users, events, notices: outbound, extraTools: deps.memory?.tools() });
    const summarizerQueue = new SummarizerQueue(main, {
      prefix,
      lockMs: config.queues.turn_lock_ms,
      stalledIntervalMs: config.queues.stalled_interval_ms,
      concurrency: SUMMARIZER_CONCURRENCY,
      logger: logger.child({ module: 'summarizer' }),
    });
    const summarizer = new SummarizerService(db, modelQueue, deps.memories, deps.users, usage);
    const compaction = new CompactionService(
      db,
      summarizer,
      events,
      turnQueue,
      outbound,
      new RedisSessionLock(main, (sessionId) => turnQueue.lockKey(sessionId), config.queues.turn_lock_ms),
      { keepTurns: () => config.session.compact_keep_turns },
      clock,
    );
    const turns = new TurnService(db, turnQueue, events, running, () => config.session.queue_mode);
    const agent = new AgentLoop(
      {
        db,
        users: deps.users,
        lifecycle,
        events,
        models: modelQueue,
        tools: tools.agentTools,
        memory: deps.memory?.recall ?? NO_MEMORIES,
        skills: NO_SKILLS,
        outbound,
        usage,
        exchange: new AutoSummarizer(summarizerQueue, () => config.session.summarizer_mode),
        compactor: new CompactionValve(compaction, db, () => config.session.compact_threshold),
        presence: channels,
      },
      { systemPrompt: config.ai.system_prompt, maxIterations: config.ai.max_iterations, historyMessages: config.session.history_turns * 2, estimate: estimateMessages },
    );
    const commands = new SlashCommandService({
      users: deps.users,
      scheduler: turnQueue,
      lifecycle,
      events,
      usage,
      models: modelQueue,
      tools: tools.agentTools,
      approvals: tools.commandApprovals,
      pendingMessages: async (ctx, sessionId) => (await turns.pending(ctx, sessionId)).length,
    });
    registerSummaryCommands(commands, { compaction });
    deps.memory?.registerCommands(commands);
    registerPairingCommands(commands, { pairing: new PairingService(db, deps.audit, deps.users, outbound), users: deps.users });
    const policies = createSenderPolicies({ config, logger, db, users: deps.users, audit: deps.audit, redis: main, notices: outbound });
    const dedupe: Deduper = {
      seen: async (key) => (await main.set(`${prefix}:dedupe:${key}`, '1', 'EX', 86_400, 'NX')) !== 'OK',
    };
    const pipeline = new InboundPipeline({
      dedupe,
      users: deps.users,
      lifecycle,
      turns,
      commands,
      events,
      policy: (channel) => policies.get(channel) ?? REFUSE_UNKNOWN,
      requireMention: (channel) => {
        const c = (config.channels as Record<string, { require_mention?: boolean }>)[channel];
        return c?.require_mention ?? true;
      },
      dmScope: () => config.session.dm_scope,
      replier: new ChannelDirectReplier(events, outbound),
      logger: logger.child({ module: 'inbound' }),
      expiry: new SessionExpiryService(lifecycle, events, () => ({ dailyResetHour: config.session.daily_reset_hour, idleMinutes: config.session.idle_minutes }), clock),
    });
    const web = new WebChannel(pipeline, deps.users, deps.sessions, (channel) => config.channels[channel].enabled);
    const sessionMaintenance = new SessionMaintenanceService(db, deps.sessions, turnQueue, events, clock);
    const maintenance = new MaintenanceQueue(main, { prefix, everyMs: MAINTENANCE_EVERY_MS, logger: logger.child({ module: 'maintenance' }) });
    const runtime = new ChatRuntime(
      deps,
      router,
      events,
      lifecycle,
      usage,
      running,
      turnQueue,
      modelQueue,
      outbound,
      channels,
      tools,
      turns,
      agent,
      commands,
      pipeline,
      web,
      policies,
      sessionMaintenance,
      maintenance,
      summarizer,
      summarizerQueue,
      compaction,
    );
    for (const transport of createChannelTransports({ config, logger, redactor: deps.redactor, onStatus: (t) => channels.emitStatus(t.status()) })) {
      channels.register(transport);
    }
    runtime.stack.add('model router', () => router.dispose());
    runtime.stack.add('queues', async () => {
      await turnQueue.close();
      await modelQueue.close();
      await outbound.close();
      await maintenance.close();
      await summarizerQueue.close();
    });
    return runtime;
  }

  /** Sets the unknown-sender policy of a channel (pairing, open, allowlist, disabled). */
  setPolicy(channel: string, policy: SenderPolicy): void {
    this.policies.set(channel, policy);
  }

  /** Runs the turn, model-call and outbound workers in this process. */
  async startWorkers(): Promise<void> {
    if (this.workersStarted) return;
    this.workersStarted = true;
    const { redis } = this.deps;
    const stopTurns = await this.turnQueue.startWorker({
      turns: this.turns,
      runner: this.agent,
      running: this.running,
      workerConnection: redis.create('worker-turns'),
      subscriber: redis.create('turn-abort-sub'),
    });
    this.stack.add('turn worker', async () => {
      this.running.abortAll('shutdown');
      await stopTurns();
    });
    const stopModels = await this.modelQueue.startWorkers(new ModelCallExecutor(this.events), redis.create('model-cancel-sub'));
    this.stack.add('model workers', stopModels);
    const stopOutbound = await this.outbound.startWorker(redis.create('worker-outbound'));
    this.stack.add('outbound worker', stopOutbound);
    const { config } = this.deps;
    const stopMaintenance = await this.maintenance.startWorker(
      {
        run: async (ctx) => ({
          prunedSessions: await this.sessionMaintenance.pruneArchived(ctx, config.session.retention_days),
          expiredApprovals: await this.tools.approvals.expireOverdue(ctx),
        }),
      },
      redis.create('worker-maintenance'),
    );
    this.stack.add('maintenance worker', stopMaintenance);
    const stopSummarizer = await this.summarizerQueue.startWorker(this.summarizer, redis.create('worker-summarizer'));
    this.stack.add('summarizer worker', stopSummarizer);
    await this.maintenance.schedule();
    this.stack.add('channels', () => this.channels.stopAll());
    const channelSwitch = new ChannelSwitch({
      registry: this.channels,
      settings: this.deps.plugins,
      sink: (m) => this.pipeline.handle(m).then(() => undefined),
      logger: this.deps.logger.child({ module: 'channels' }),
    });
    await channelSwitch.start();
    this.stack.add('channel switch', () => channelSwitch.stop());
    await this.turns.recoverPending(this.deps.logger);
    void this.deps.memory?.startBackground(Ctx.system(this.deps.logger, 'memory'));
    await new ReplyRedelivery(this.deps.db, this.outbound).recover(Ctx.system(this.deps.logger, 'redelivery'));
  }

  async dispose(): Promise<void> {
    await this.stack.dispose((name, err) => this.deps.logger.error({ err, resource: name }, 'error while stopping'));
  }
}
