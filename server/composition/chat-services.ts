import type { AppConfig } from '../config';
import { SYSTEM_CLOCK, type Clock } from '../common/clock';
import type { Logger } from '../common/logger';
import { NO_METRICS, type Metrics } from '../common/metrics';
import { meteredEvents, meteredExecutor } from '../metrics';
import type { SecretRedactor } from '../common/secret-redactor';
import type { Db } from '../persistence/db';
import type { RedisConnections } from '../redis/redis-connections';
import { RedisSessionEvents } from '../redis/redis-session-events';
import { RedisSessionLocks } from '../redis/redis-session-locks';
import { RedisTurnAborts } from '../redis/redis-turn-aborts';
import { RedisInteractiveMarks } from '../redis/redis-interactive-marks';
import { RedisMailbox } from '../redis/redis-mailbox';
import { ProcessLiveness } from '../redis/process-liveness';
import { RedisChannelLeases } from '../redis/redis-channel-leases';
import type { ChannelLeases } from '../channels/channel-leases';
import { ChannelRegistry } from '../channels/channel-registry';
import { LiveReplyRelay } from '../channels/live-reply-relay';
import { Ctx } from '../common/ctx';
import { DeliveryService } from '../channels/delivery';
import { ChannelOverview } from '../channels/policies/channel-overview';
import { WebChannel } from '../channels/web/web-channel';
import { WebVoiceNotes } from '../channels/web/web-voice';
import { ApiChannel, ImageFetcher, isStatelessApiSession } from '../channels/api';
import { RedisClientRequests } from '../redis/redis-client-requests';
import { RedisApiRateLimit } from '../redis/redis-api-rate-limit';
import type { SenderPolicy } from '../channels/inbound-pipeline';
import { AgentLoop, ModelCallExecutor, NO_MEMORIES } from '../modules/agent';
import type { AuditService } from '../modules/audit';
import { SlashCommandService } from '../modules/commands';
import { DirectTurns, RunningTurns, SessionRotation, TurnControl, TurnRunner, TurnService } from '../modules/conversation';
import { HousekeepingService } from '../modules/maintenance';
import { MemoryReindexCommands, type MemoryService } from '../modules/memory';
import { estimateMessages, loggedExecutor, ModelCallService, ModelRouter, ProviderHealthService } from '../modules/models';
import { RedisProviderCallLog } from '../redis/redis-provider-call-log';
import type { McpService } from '../modules/mcp';
import { PairingService, registerPairingCommands } from '../modules/pairing';
import type { PluginSettingService } from '../modules/plugins';
import { Session, SessionLifecycleService, SessionMaintenanceService, type SessionService } from '../modules/sessions';
import { AutoSummarizer, CompactionService, CompactionValve, DeferredCompaction, registerSummaryCommands, SummarizerService } from '../modules/summarizer';
import { RedisCompactionRequests } from '../redis/redis-compaction-requests';
import { UsageService } from '../modules/usage';
import type { UserService } from '../modules/users';
import type { QueueEnv } from '../../jobs/bull';
import { deliveryJobs } from '../../jobs/outbound';
import { maintenanceJobs } from '../../jobs/maintenance';
import { ModelCallQueues } from '../../jobs/model-calls';
import { summaryJobs } from '../../jobs/summarizer';
import { turnJobs } from '../../jobs/turns';
import { skillSyncJobs } from '../../jobs/skills';
import { memoryReindexJobs } from '../../jobs/memory';
import { BullJobProgress } from '../../jobs/job-progress';
import { QUEUES } from '../../jobs/queues';
import { JobProgressService } from '../modules/queues';
import { SkillLayer } from './skill-layer';
import { WebhookReplies, WebhookService, WebhookTrigger, withoutWebhookTurns } from '../modules/webhooks';
import { RedisWebhookRateLimit } from '../redis/redis-webhook-rate-limit';
import type { OutboundSender } from '../modules/agent';
import type { MemoryLayer } from './memory-layer';
import { DocumentLayer } from './document-layer';
import { createToolLayer, type ToolLayer } from './tool-layer';
import { createChannelTransports, createPlatformTransport, type ChannelSdk } from './channel-transports';
import { ChannelSetupService, type SetupSealer } from '../modules/channel-setup';
import { ChannelSetupSync } from '../channels/channel-setup-sync';
import type { ChannelTransport } from '../channels/channel.types';
import { BotApiTokenCheck } from '../channels/telegram/telegram-token-check';
import { createInboundPipeline } from './inbound-layer';
import { IdentityLinkService } from '../modules/linking';
import { RedisLinkCodes } from '../redis/redis-link-codes';
import { createBeatLayer, type BeatLayer } from './beat-layer';
import { createBudgets } from './budget-layer';
import type { BudgetService } from '../modules/budgets';
import { registerBeatCommands, type ResultChannels } from '../modules/beats';
import { createVoiceLayer, type VoiceLayer } from './voice-layer';

export interface ChatDeps {
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
  /** MCP servers whose tools join the registry. */
  mcp?: McpService;
  /** A model router built around a test provider. @default from `config.ai` */
  router?: ModelRouter;
  /** Time for session resets and retention; tests move it forward. @default SYSTEM_CLOCK */
  clock?: Clock;
  /** Where turns, model calls, deliveries and job failures are counted. @default none */
  metrics?: Metrics;
  /** Seals the channel settings entered in the console. */
  secretBox: SetupSealer;
  /** Fakes of the platforms' SDKs (tests). @default the real ones */
  channelSdk?: ChannelSdk;
}

/** How often the maintenance job runs (retention, overdue approvals). */
const MAINTENANCE_EVERY_MS = 3_600_000;

/** Everything that answers messages, built once per process. */
export interface ChatServices {
  queueEnv: QueueEnv;
  /** This process in the cluster (workers are named after it, so successors can reclaim their jobs). */
  liveness: ProcessLiveness;
  router: ModelRouter;
  events: RedisSessionEvents;
  lifecycle: SessionLifecycleService;
  rotation: SessionRotation;
  usage: UsageService;
  /** Spending limits: the guard every model call asks, `me.budget`, `setUserBudget`. */
  budgets: BudgetService;
  running: RunningTurns;
  turnControl: TurnControl;
  turnRunner: TurnRunner;
  turns: TurnService;
  models: ModelCallService;
  modelQueues: ModelCallQueues;
  channels: ChannelRegistry;
  /** Telegram and WhatsApp set up from the console (OWNER), sealed at rest. */
  channelSetups: ChannelSetupService;
  /** Rebuilds the platform transports when their set-up changes (read by the channel switch). */
  channelSetupSync: ChannelSetupSync;
  /** One holder per platform channel in the cluster. */
  channelLeases: ChannelLeases;
  delivery: DeliveryService;
  tools: ToolLayer;
  agent: AgentLoop;
  commands: SlashCommandService;
  pipeline: ReturnType<typeof createInboundPipeline>['pipeline'];
  web: WebChannel;
  pairing: PairingService;
  overview: ChannelOverview;
  sessionMaintenance: SessionMaintenanceService;
  housekeeping: HousekeepingService;
  maintenance: ReturnType<typeof maintenanceJobs>;
  summarizer: SummarizerService;
  compaction: CompactionService;
  /** Beats: service, runner, start-up sync, run feed, and the result delivery for the server's own work. */
  beats: BeatLayer;
  /** Skills: folder sync, `/skills`, the agent's skill slot. */
  skills: SkillLayer;
  /** The OpenAI-compatible API (`/v1`): the channel and the per-token rate limit. */
  api: { channel: ApiChannel; rateLimit: RedisApiRateLimit };
  /** Webhooks: CRUD for GraphQL and the `/hooks/<name>` trigger. */
  webhooks: { service: WebhookService; trigger: WebhookTrigger };
  /** The agent's outbound port: replies to their chats, webhook results to the hook's target. */
  outbound: OutboundSender;
  /** Documents (with a memory layer): service, ingestion, search and recall with memories. */
  documents: DocumentLayer | null;
  /** Voice notes in (transcription) and spoken replies out. */
  voice: VoiceLayer;
  /** `sendVoiceNote`: recordings from the web chat. */
  webVoice: WebVoiceNotes;
  /** `jobProgress(jobId)`: updates of background jobs started through the API (skill syncs, document ingestion). */
  jobProgress: JobProgressService;
  /** Linking a Telegram or WhatsApp handle by its user: codes for the console, `/link CODE` in chat. */
  selfLink: IdentityLinkService;
  /** Providers & models: probes, recent latency and errors, test calls. */
  providerHealth: ProviderHealthService;
  /** `reindexMemories`: queues a re-index of the memory search index. */
  memoryReindex: MemoryReindexCommands;
  /** Sets the unknown-sender policy of a channel (pairing, open, allowlist, disabled). */
  setPolicy(channel: string, policy: SenderPolicy): void;
  /** Closes the queue producers and the model router. */
  close(): Promise<void>;
}

/**
 * Builds the chat services of a process: every service once, each port wired to its adapter (BullMQ
 * queues from jobs/, Redis locks, mailboxes and pub/sub from server/redis/).
 */
export async function buildChatServices(deps: ChatDeps): Promise<ChatServices> {
  const { config, logger, redis, db } = deps;
  const prefix = config.redis.prefix;
  const q = config.queues;
  const main = redis.create('chat');
  const eventsSub = redis.create('events-sub');
  const beatFeedSub = redis.create('beat-runs-sub');
  await redis.waitReady();
  const metrics = deps.metrics ?? NO_METRICS;
  const queueEnv: QueueEnv = {
    prefix,
    redis: main,
    connect: (name) => redis.create(name),
    lockMs: q.turn_lock_ms,
    stalledIntervalMs: q.stalled_interval_ms,
    logger: logger.child({ module: 'queues' }),
    onJobFailed: (queue) => metrics.inc('muninn_job_failures_total', { queue }),
  };
  const router =
    deps.router ??
    (await ModelRouter.fromConfig(config.ai, {
      logger: logger.child({ module: 'models' }),
      redactor: deps.redactor,
      sensitiveLogs: config.log.sensitive,
      downgradeTo: config.budgets.downgrade_to,
    }));
  const clock = deps.clock ?? SYSTEM_CLOCK;
  const events = new RedisSessionEvents(main, eventsSub, logger.child({ module: 'events' }), { prefix });
  // Turns publish through this one: their events also feed the turn metrics.
  const turnEvents = meteredEvents(events, metrics);
  const lifecycle = new SessionLifecycleService(db, clock);
  const usage = new UsageService(db, clock);
  const running = new RunningTurns();
  const liveness = new ProcessLiveness(main, prefix);
  await liveness.start();
  // A message is answered at once only while no drain waits in the turns queue (BullMQ's keys of waiting jobs).
  const turnsWaiting = ['wait', 'prioritized'].map((k) => `${prefix}:bull:${QUEUES.turns}:${k}`);
  const locks = new RedisSessionLocks(main, prefix, q.turn_lock_ms, liveness, turnsWaiting);
  const turnQueue = turnJobs(queueEnv);
  const turnControl = new TurnControl(turnQueue, new RedisTurnAborts(main, () => redis.create('turn-abort-sub'), prefix, logger), locks, new DirectTurns(turnQueue, locks, running, logger.child({ module: 'turns' })));
  const marks = new RedisInteractiveMarks(main, prefix, config.ai.background_grace_ms);
  const modelQueues = new ModelCallQueues(queueEnv, router, config.ai.max_retries, marks, liveness);
  await modelQueues.init();
  const modelLog = logger.child({ module: 'model-calls' });
  const channels = new ChannelRegistry(logger.child({ module: 'channels' }));
  // Deltas also reach channels that stream replies live (Telegram with stream: edit).
  const liveReplies = new LiveReplyRelay(turnEvents, channels, async (sessionId) => {
    const s = await db.repo(Ctx.system(logger, 'live-replies'), Session).findOneBy({ id: sessionId });
    return s ? { channel: s.channel, chatId: s.chatId } : null;
  });
  const callLog = new RedisProviderCallLog(main, prefix, modelLog);
  const outboundQueue = deliveryJobs(queueEnv, q.outbound_attempts);
  const delivery = new DeliveryService(
    { channels, mailbox: new RedisMailbox(main, prefix, q.turn_lock_ms, liveness), jobs: outboundQueue, events, logger: logger.child({ module: 'outbound' }), metrics },
    // The process holding a channel serves its chats at once, the outbound queue being the fallback.
    { attempts: q.outbound_attempts, localDrains: q.outbound_concurrency },
  );
  const resultChannels: ResultChannels = { names: () => channels.all().map((t) => t.channel), readsSessionEvents: (c) => channels.get(c)?.delivery === 'session-events' };
  const documents = deps.memory ? new DocumentLayer({ config, db, memory: deps.memory, queueEnv, notices: delivery }) : null;
  const beatLayer = createBeatLayer({ config, logger, db, users: deps.users, queueEnv, feedSub: beatFeedSub, clock, channels: resultChannels, notices: delivery });
  // Every model call asks the budget guard first (DESIGN §10, Budgets).
  const budgets = createBudgets({
    config,
    db,
    redis: main,
    audit: deps.audit,
    notices: delivery,
    results: () => beatLayer.results,
    channels: resultChannels,
    clock,
    metrics,
    logger: logger.child({ module: 'budgets' }),
  });
  const models = new ModelCallService(
    router,
    {
      jobs: modelQueues,
      executor: meteredExecutor(loggedExecutor(new ModelCallExecutor(liveReplies), callLog), metrics),
      marks,
      budgets,
    },
    { backgroundGraceMs: config.ai.background_grace_ms, onFallback: (from, err) => modelLog.warn({ from, err }, 'model call failed; trying the fallback') },
  );
  const tools = createToolLayer({
    config,
    db,
    audit: deps.audit,
    plugins: deps.plugins,
    users: deps.users,
    notices: delivery,
    extraTools: [...(deps.memory?.tools() ?? []), ...(documents?.tools() ?? []), ...beatLayer.tools],
    sources: deps.mcp ? [deps.mcp.hub] : [],
  });
  // Embeddings are charged to the user they are made for, with a usage row of their own.
  deps.memory?.useEmbeddings(router, async (ctx, provider, model, texts, reportedTokens) => {
    const { usage: used, costUsd } = await models.chargeEmbeddings(ctx, provider, model, texts, reportedTokens);
    await usage.record(ctx, { userId: ctx.userId, sessionId: null, messageId: null, provider, model, role: 'embeddings', usage: used, costUsd });
  });
  const summaryQueue = summaryJobs(queueEnv);
  const summarizer = new SummarizerService(db, models, deps.memories, deps.users, usage);
  const rotation = new SessionRotation({ lifecycle, scheduler: turnControl, events });
  const compaction = new CompactionService(db, summarizer, rotation, delivery, locks, {
    keepTurns: () => config.session.compact_keep_turns,
    // A compacted session starts at no more than half the threshold, so it does not compact again at once.
    seedBudgetTokens: () => Math.floor(config.session.compact_threshold * models.info('main').contextWindow * 0.5),
    contextWindow: () => models.info('main').contextWindow,
    drainLater: (sessionId) => turnControl.schedule(sessionId),
  }, clock);
  const skillJobs = skillSyncJobs(queueEnv);
  const skills = new SkillLayer({ config, db, audit: deps.audit, plugins: deps.plugins, redis: main, jobs: skillJobs });
  const jobProgressSource = new BullJobProgress(queueEnv, [QUEUES.skills, QUEUES.memory, QUEUES.ingest, QUEUES.exports]);
  const reindexJobs = memoryReindexJobs(queueEnv);
  const turns = new TurnService(db, turnControl, events, running, () => config.session.queue_mode);
  const webhookService = new WebhookService(db, deps.users, deps.audit);
  const voice = createVoiceLayer({
    config,
    logger,
    redactor: deps.redactor,
    db,
    redis: main,
    queueEnv,
    inner: new WebhookReplies(delivery, { hooks: webhookService, results: beatLayer.results }),
    delivery,
    channels,
    turns,
    lifecycle,
    usage,
  });
  const outbound = voice.replies;
  const webhookTrigger = new WebhookTrigger({
    db,
    users: deps.users,
    lifecycle,
    turns,
    limiter: new RedisWebhookRateLimit(main, { prefix, perMinute: config.webhooks.rate_per_minute }, logger.child({ module: 'webhooks' })),
    logger: logger.child({ module: 'webhooks' }),
  });
  const clientRequests = new RedisClientRequests(main, prefix);
  const summarizeExchanges = withoutWebhookTurns(
    new AutoSummarizer(summaryQueue, {
      mode: () => config.session.summarizer_mode,
      batch: () => config.session.summarizer_batch,
      idleMs: () => config.session.summarizer_idle_seconds * 1000,
    }),
  );
  const agent = new AgentLoop(
    {
      db,
      users: deps.users,
      lifecycle,
      events: turnEvents,
      models,
      tools: tools.agentTools,
      memory: documents?.recall ?? deps.memory?.recall ?? NO_MEMORIES,
      skills: skills.prompter,
      outbound,
      usage,
      // A stateless API request is the client's conversation, not one Muninn keeps: no memories from it.
      exchange: { afterExchange: (ctx, s, ex) => (isStatelessApiSession(s) ? Promise.resolve() : summarizeExchanges.afterExchange(ctx, s, ex)) },
      clientRequests,
      compactor: new CompactionValve(compaction, db, () => config.session.compact_threshold),
      presence: channels,
    },
    { systemPrompt: config.ai.system_prompt, maxIterations: config.ai.max_iterations, historyMessages: config.session.history_turns * 2, estimate: estimateMessages },
  );
  const beats = beatLayer.attachRunner({ agent, lifecycle });
  const pairing = new PairingService(db, deps.audit, deps.users, delivery);
  const commands = new SlashCommandService({
    users: deps.users,
    scheduler: turnControl,
    rotation,
    events,
    usage,
    models,
    tools: tools.agentTools,
    approvals: tools.commandApprovals,
    budgets,
    pendingMessages: async (ctx, sessionId) => (await turns.pending(ctx, sessionId)).length,
  });
  const deferred = new DeferredCompaction({ db, compaction, requests: new RedisCompactionRequests(main, prefix), scheduler: turnControl });
  registerSummaryCommands(commands, { compaction, deferred });
  deps.memory?.registerCommands(commands);
  documents?.registerCommands(commands);
  skills.registerCommands(commands);
  registerPairingCommands(commands, { pairing, users: deps.users });
  registerBeatCommands(commands, beats.beats);
  voice.registerCommands(commands);
  const selfLink = new IdentityLinkService({ users: deps.users, audit: deps.audit, store: new RedisLinkCodes(main, prefix), clock });
  const { pipeline, policies } = createInboundPipeline({ config, logger, db, redis: main, users: deps.users, pairing, lifecycle, rotation, turns, commands, events, notices: delivery, clock, voice: voice.notes, linker: selfLink, documents: documents?.inbox });
  const web = new WebChannel(
    pipeline,
    deps.users,
    deps.sessions,
    (channel) => config.channels[channel].enabled,
    () => redis.unreachable(),
    (ctx, userId) => budgets.assertWithinBudget(ctx, userId),
  );
  const api = new ApiChannel({
    db,
    pipeline,
    lifecycle,
    events,
    turns: turnControl,
    requests: clientRequests,
    serverToolNames: () => tools.registry.all().map((t) => t.name),
    images: new ImageFetcher({ maxBytes: config.channels.api.max_image_kb * 1024 }),
    audit: deps.audit,
    logger: logger.child({ module: 'api' }),
    aliases: () => config.channels.api.models,
    budget: (ctx, userId) => budgets.assertWithinBudget(ctx, userId),
    now: () => clock.now(),
  });
  const apiRateLimit = new RedisApiRateLimit(main, { prefix, perMinute: config.channels.api.rate_per_minute }, logger.child({ module: 'api' }));
  const sessionMaintenance = new SessionMaintenanceService(db, deps.sessions, turnControl, events, clock);
  const housekeeping = new HousekeepingService({ sessions: sessionMaintenance, approvals: tools.approvals, retentionDays: () => config.session.retention_days });
  const maintenance = maintenanceJobs(queueEnv, MAINTENANCE_EVERY_MS);
  const transportDeps = { config, logger, redactor: deps.redactor, onStatus: (t: ChannelTransport) => channels.emitStatus(t.status()), commands: () => commands.menu(), sdk: deps.channelSdk };
  for (const transport of createChannelTransports(transportDeps)) channels.register(transport);
  const channelSetups = new ChannelSetupService({
    db,
    box: deps.secretBox,
    redactor: deps.redactor,
    audit: deps.audit,
    plugins: deps.plugins,
    telegram: new BotApiTokenCheck({ apiRoot: config.channels.telegram.api_root }),
    configured: (channel) => ({ enabled: config.channels[channel].enabled, secretSet: channel === 'telegram' && !!config.channels.telegram.bot_token }),
  });
  const channelSetupSync = new ChannelSetupSync({
    registry: channels,
    setups: channelSetups,
    build: (channel, stored) => createPlatformTransport(transportDeps, channel, stored),
    logger: logger.child({ module: 'channels' }),
  });
  const overview = new ChannelOverview({ registry: channels, settings: deps.plugins });
  return {
    queueEnv,
    router,
    events,
    lifecycle,
    rotation,
    usage,
    budgets,
    running,
    turnControl,
    liveness,
    turnRunner: new TurnRunner(turns, agent, locks, [deferred]),
    turns,
    models,
    modelQueues,
    channels,
    channelSetups,
    channelSetupSync,
    channelLeases: new RedisChannelLeases(main, prefix, config.channels.lease_ms, liveness),
    delivery,
    tools,
    agent,
    commands,
    pipeline,
    web,
    pairing,
    overview,
    sessionMaintenance,
    housekeeping,
    maintenance,
    summarizer,
    compaction,
    beats,
    skills,
    documents,
    webhooks: { service: webhookService, trigger: webhookTrigger },
    api: { channel: api, rateLimit: apiRateLimit },
    outbound,
    voice,
    webVoice: new WebVoiceNotes(web, () => config.voice.max_bytes),
    jobProgress: new JobProgressService(jobProgressSource, [
      ...(documents ? [(ctx: Ctx, jobId: string) => documents.service.ownsJob(ctx, jobId)] : []),
      // The export of a user's data is followed by whoever asked for it.
      async (ctx: Ctx, jobId: string) => jobId.startsWith('export-') && !!ctx.userId && (await jobProgressSource.requesterOf(jobId)) === ctx.userId,
    ]),
    selfLink,
    providerHealth: new ProviderHealthService(router, callLog),
    memoryReindex: new MemoryReindexCommands(reindexJobs),
    setPolicy: (channel, policy) => void policies.set(channel, policy),
    close: async () => {
      await delivery.close();
      for (const producer of [turnQueue, modelQueues, outboundQueue, maintenance, summaryQueue, beats, skillJobs, reindexJobs, jobProgressSource, voice]) await producer.close();
      await documents?.close();
      await liveness.stop();
      await router.dispose();
    },
  };
}
