import 'reflect-metadata';
import express from 'express';
import path from 'node:path';
import type { DestinationStream } from 'pino';
import type { DataSource } from 'typeorm';
import type { AppConfig } from './config';
import type { Clock } from './common/clock';
import { Ctx } from './common/ctx';
import { DisposableStack } from './common/disposable';
import { createLogger, type Logger } from './common/logger';
import { SecretRedactor } from './common/secret-redactor';
import { SecretBox } from './common/secret-box';
import { securePrivateFolder } from './persistence/data-folder';
import { appVersion } from './common/app-version';
import { TrustLevel } from './common/trust';
import { Db } from './persistence/db';
import { openDatabase } from './persistence/data-source';
import { ENTITIES } from './entities';
import { ManagedRedis } from './redis/managed-redis';
import type { Redis } from 'ioredis';
import { RedisChangeTransport } from './redis/redis-change-transport';
import { RedisConnections, safeRedisUrl } from './redis/redis-connections';
import { AuditService } from './modules/audit';
import { ApiTokenService, OwnerBootstrap } from './modules/auth';
import type { MemoryService } from './modules/memory';
import { createServedTools, MCP_SERVE_CHANNEL, McpOAuth, McpServeService, McpService, type McpAsk } from './modules/mcp';
import { mcpOAuthCallbackRouter } from './http/mcp-oauth-callback';
import { mcpRouter } from './http/mcp-endpoint';
import { DEFAULT_MODEL } from './channels/api';
import { PluginSettingService } from './modules/plugins';
import { SessionService } from './modules/sessions';
import { UserService } from './modules/users';
import { buildAppSchema } from './graphql/build-schema';
import { createContextFactory } from './graphql/context-factory';
import { createQueryLimits } from './graphql/limits';
import { createResolverRegistry, createStreams, type ApiServices } from './graphql/resolver-registry';
import { PairingService } from './modules/pairing';
import { buildChatServices, type ChatServices } from './composition/chat-services';
import type { ChannelSdk } from './composition/channel-transports';
import { startChatChannels, startChatWorkers } from './composition/chat-workers';
import { MemoryLayer } from './composition/memory-layer';
import { KnowledgeSearchService } from './modules/documents';
import { uploadRouter } from './http/upload-endpoint';
import { ROLES, type Role } from './composition/roles';
import { startHttpServer, type RunningHttpServer } from './http/http-server';
import { startOpsServer } from './http/ops-server';
import { webhookRouter } from './http/webhook-endpoint';
import { openAIRouter } from './http/openai-endpoint';
import { QueueService } from './modules/queues';
import { metricsAccess, PromMetrics } from './metrics';
import { BullQueueInspector, queueNames } from '../jobs/queue-inspector';
import { startUserExportWorker, userExportJobs } from '../jobs/user-export';
import type { UserDataService } from './modules/userdata';
import { createUserDataService } from './composition/user-data-layer';
import { RedisExportTickets } from './redis/redis-export-tickets';
import { RedisUserKeys } from './redis/redis-user-keys';
import { exportDownloadRouter } from './http/export-download';

export interface AppOptions {
  config: AppConfig;
  /** Where logs go. @default stdout */
  logDestination?: DestinationStream;
  /** Connect to Redis (managed or REDIS_URL). CLI commands that only touch the database turn it off. @default true */
  redis?: boolean;
  /** Time for session resets and retention; tests move it forward. @default wall-clock time */
  clock?: Clock;
  /** Fakes of the chat platforms' SDKs (tests: a WhatsApp socket). @default the real ones */
  channelSdk?: ChannelSdk;
}

/** The services of one process. */
export interface Services {
  audit: AuditService;
  users: UserService;
  tokens: ApiTokenService;
  sessions: SessionService;
  memories: MemoryService;
  /** Memory search index, recall, workspace files (the memory layer). */
  memory: MemoryLayer;
  plugins: PluginSettingService;
  ownerBootstrap: OwnerBootstrap;
  /** Encrypts secrets at rest (key from MUNINN_SECRET_KEY or `<data>/secret.key`). */
  secretBox: SecretBox;
  /** Export and erasure of a user's data (README "Your data: export and erase"). */
  userData: UserDataService;
  /** MCP servers, their connections and users' credentials. */
  mcp: McpService;
}

/**
 * The composition root: the one place that builds the object graph of a process. `createApp` opens the
 * database (running migrations) and Redis; `listen` starts HTTP; `dispose` releases everything in reverse.
 */
export class App {
  private http: RunningHttpServer | null = null;
  private workersStarted = false;
  /** When this process built its services (`serverInfo.uptimeSeconds`). */
  readonly startedAt = new Date();
  private channelsStarted = false;
  /** `run` is doing its start-up work (beats and skills synced, workers and channels started). */
  private starting = false;
  private stopping = false;

  private constructor(
    readonly config: AppConfig,
    readonly logger: Logger,
    readonly redactor: SecretRedactor,
    readonly dataSource: DataSource,
    readonly db: Db,
    readonly redis: RedisConnections | null,
    readonly services: Services,
    /** Queues, agent, pipeline and channels; null when the app runs without Redis (DB-only CLI commands). */
    readonly chat: ChatServices | null,
    readonly appliedMigrations: string[],
    private readonly stack: DisposableStack,
    /** This process's Prometheus registry (served at /metrics when `metrics.enabled`). */
    readonly metrics: PromMetrics,
  ) {
    const mcp = services.mcp;
    this.mcpOAuth = new McpOAuth({
      credentials: mcp.credentials,
      audit: services.audit,
      logger: logger.child({ module: 'mcp-oauth' }),
      baseUrl: () => this.publicBaseUrl(),
      definitionOf: (ctx, server) => mcp.definitionOf(ctx, server),
      dropUser: (server, userId) => mcp.hub.dropUser(server, userId),
    });
    mcp.useOAuth(this.mcpOAuth);
  }

  private readonly mcpOAuth: McpOAuth;

  /** This server's base URL as browsers reach it: `mcp.public_url`, else the address it listens on. */
  private publicBaseUrl(): string {
    const server = this.config.server;
    return this.config.mcp.public_url ?? this.http?.url ?? `http://${server.host === '0.0.0.0' || server.host === '::' ? '127.0.0.1' : server.host}:${server.port}`;
  }

  static async create(options: AppOptions): Promise<App> {
    const { config } = options;
    const redactor = new SecretRedactor();
    registerConfigSecrets(redactor, config);
    const logger = createLogger({ level: config.log.level, destination: options.logDestination, redactor });
    const stack = new DisposableStack();
    const metrics = new PromMetrics();
    try {
      securePrivateFolder(config.data_dir);
      // Redis (the managed one is a process of its own) gets ready while this process opens and migrates the database.
      const connecting = options.redis !== false ? connectRedis(config, logger) : null;
      connecting?.catch(() => undefined); // awaited once the database is open
      let opened: Awaited<ReturnType<typeof openDatabase>>;
      try {
        opened = await openDatabase(config, ENTITIES);
      } catch (err) {
        await connecting?.then((r) => r.close(), () => undefined);
        throw err;
      }
      const { dataSource, applied } = opened;
      stack.add('database', () => dataSource.destroy());
      if (applied.length) logger.info({ migrations: applied }, 'applied database migrations');
      const db = new Db(dataSource);

      let redis: RedisConnections | null = null;
      if (connecting) {
        const connected = await connecting;
        if (connected.managed) stack.add('managed redis', () => connected.managed!.stop());
        redis = connected.redis;
        stack.add('redis clients', () => connected.redis.close());
        // Copies of rarely changing rows (tokens, users, settings) are dropped when any process changes them.
        const changes = new RedisChangeTransport(connected.main, connected.changesSub, config.redis.prefix, logger.child({ module: 'changes' }));
        await changes.start();
        db.changes.connect(changes);
      }

      const audit = new AuditService(db);
      const users = new UserService(db, audit, config.default_trust as TrustLevel);
      const tokens = new ApiTokenService(db, users, audit);
      const memory = MemoryLayer.create({ config, db, audit, logger });
      stack.add('memory', () => memory.dispose());
      const secretBox = SecretBox.forDataDir(config.data_dir);
      const mcp = new McpService({ db, box: secretBox, redactor, audit, config: config.mcp, logger });
      // Stops stdio servers' processes on shutdown.
      stack.add('mcp servers', () => mcp.dispose());
      const services: Services = {
        audit,
        users,
        tokens,
        sessions: new SessionService(db),
        memories: memory.service,
        memory,
        plugins: new PluginSettingService(db, audit),
        ownerBootstrap: new OwnerBootstrap(users, tokens, config.data_dir),
        secretBox,
        mcp,
        userData: createUserDataService({ config, db, audit, store: memory.store, queues: null }),
      };
      let chat: ChatServices | null = null;
      if (redis) {
        chat = await buildChatServices({
          config,
          logger,
          redactor,
          db,
          redis,
          users,
          sessions: services.sessions,
          audit,
          plugins: services.plugins,
          memories: services.memories,
          memory,
          mcp,
          clock: options.clock,
          metrics,
          secretBox,
          channelSdk: options.channelSdk,
        });
        const built = chat;
        stack.add('chat services', () => built.close());
        const exportJobs = userExportJobs(chat.queueEnv);
        stack.add('export queue', () => exportJobs.close());
        services.userData = createUserDataService({
          config,
          db,
          audit,
          store: memory.store,
          queues: {
            jobs: exportJobs,
            tickets: new RedisExportTickets(chat.queueEnv.redis, config.redis.prefix),
            redisKeys: new RedisUserKeys(chat.queueEnv.redis, config.redis.prefix),
            beats: chat.beats.scheduler,
          },
        });
      }
      return new App(config, logger, redactor, dataSource, db, redis, services, chat, applied, stack, metrics);
    } catch (err) {
      await stack.dispose(() => undefined);
      throw err;
    }
  }

  /** A context for work the server does itself. */
  systemCtx(reason: string): Ctx {
    return Ctx.system(this.logger, reason);
  }

  /** URL of the HTTP server once listening. */
  get url(): string {
    if (!this.http) throw new Error('The HTTP server is not listening');
    return this.http.url;
  }

  private inspector: BullQueueInspector | null = null;

  /** Read-only view of this deployment's queues (admin queue pages, queue-depth metrics). */
  private queueInspector(chat: ChatServices): BullQueueInspector {
    this.inspector ??= new BullQueueInspector(
      this.redis!.create('queue-inspector'),
      `${this.config.redis.prefix}:bull`,
      () =>
        queueNames(
          chat.router.providers().map((p) => p.name),
          chat.channels
            .all()
            .filter((t) => t.delivery !== 'session-events')
            .map((t) => t.channel),
        ),
    );
    return this.inspector;
  }

  /** The services the GraphQL API serves. */
  private apiServices(): ApiServices {
    const s = this.services;
    const chat = this.chat;
    return {
      users: s.users,
      tokens: s.tokens,
      sessions: s.sessions,
      memories: s.memories,
      knowledgeSearch: this.chat?.documents?.search ?? new KnowledgeSearchService(this.db, s.memory.store, s.memory.search),
      plugins: s.plugins,
      audit: s.audit,
      pairing: chat?.pairing ?? new PairingService(this.db, s.audit, s.users, null),
      userData: s.userData,
      queues: chat && this.redis ? new QueueService(this.queueInspector(chat), s.audit) : null,
      mcp: s.mcp,
      serverInfo: { version: appVersion(), startedAt: this.startedAt },
      chat: chat && {
        web: chat.web,
        rotation: chat.rotation,
        turnControl: chat.turnControl,
        events: chat.events,
        usage: chat.usage,
        budgets: chat.budgets,
        compaction: chat.compaction,
        sessionMaintenance: chat.sessionMaintenance,
        tools: chat.tools,
        overview: chat.overview,
        channelSetups: chat.channelSetups,
        beats: chat.beats.beats,
        beatRunner: chat.beats.runner,
        beatFeed: chat.beats.feed,
        skills: { service: chat.skills.service, syncCommands: chat.skills.syncCommands },
        jobProgress: chat.jobProgress,
        webhooks: chat.webhooks.service,
        selfLink: chat.selfLink,
        documents: chat.documents?.service ?? null,
        providerHealth: chat.providerHealth,
        memoryReindex: chat.memoryReindex,
        webVoice: chat.webVoice,
      },
    };
  }

  /** Makes sure the OWNER exists, then serves GraphQL, webhooks and health checks. */
  async listen(): Promise<string> {
    const ctx = this.systemCtx('startup');
    await this.services.ownerBootstrap.ensureOwner(ctx);
    const api = this.apiServices();
    if (this.chat && this.redis) this.metrics.useQueues(this.queueInspector(this.chat));
    const schema = await buildAppSchema(createResolverRegistry(api, this.config.graphql.max_page_size), undefined);
    const explorer = this.config.server.explorer && process.env.NODE_ENV !== 'production';
    const chat = this.chat;
    const contextFor = createContextFactory({
      tokens: api.tokens,
      users: api.users,
      logger: this.logger,
      streams: createStreams(api, this.config.graphql.subscription_recheck_ms, this.metrics),
    });
    this.http = await startHttpServer({
      host: this.config.server.host,
      port: this.config.server.port,
      bodyLimitKb: this.config.server.body_limit_kb,
      // A compressed body of the OpenAI-compatible API may decode to its own (larger, images) limit.
      decodedBodyLimitBytes: (url) => (url.startsWith('/v1/') ? this.config.channels.api.max_body_kb : this.config.server.body_limit_kb) * 1024,
      explorer,
      publicIntrospection: this.config.graphql.public_introspection ?? process.env.NODE_ENV !== 'production',
      schema,
      limits: createQueryLimits(this.config.graphql),
      logger: this.logger.child({ module: 'http' }),
      redact: (text) => this.redactor.redact(text),
      contextFor,
      metrics: this.metricsEndpoint(),
      uploads: chat?.documents ? uploadRouter({ documents: chat.documents.service, contextFor, logger: this.logger.child({ module: 'uploads' }) }) : undefined,
      readiness: () => this.serviceReadiness(),
      openai: chat ? this.openAIRouter(chat) : undefined,
      mcp: this.mcpRouter(),
      exports: exportDownloadRouter(this.services.userData, this.logger.child({ module: 'exports' })),
      hooks: chat ? webhookRouter(chat.webhooks.trigger, { maxBodyKb: this.config.webhooks.max_body_kb, logger: this.logger.child({ module: 'webhooks' }) }) : undefined,
      // Every API process serves the webhooks of the channels that are on, held here or elsewhere.
      webhooks: () =>
        (chat?.channels.all() ?? [])
          .filter((t) => chat?.channels.isStarted(t.channel) || chat?.channels.isOn(t.channel))
          .map((t) => t.webhook?.((m) => chat!.pipeline.handle(m).then(() => undefined)) ?? null)
          .filter((h): h is NonNullable<typeof h> => h !== null),
    });
    this.stack.add('http server', () => this.http?.close());
    this.logger.info({ url: `${this.http.url}/graphql`, explorer }, `Muninn is listening on ${this.http.url}/graphql`);
    return this.http.url;
  }

  /** `/v1`: the OpenAI-compatible API, authorised by API tokens like GraphQL. */
  private openAIRouter(chat: ChatServices) {
    const api = this.config.channels.api;
    const authCtx = this.systemCtx('api-auth');
    return openAIRouter({
      channel: chat.api.channel,
      authenticate: async (token) => {
        const found = await this.services.tokens.verify(authCtx, token);
        return found ? { user: found.user, tokenId: found.apiToken.id } : null;
      },
      rateLimit: (tokenId) => chat.api.rateLimit.consume(tokenId),
      limits: { maxMessages: api.max_messages, maxMessageChars: api.max_message_chars, maxImages: api.max_images, maxImageBytes: api.max_image_kb * 1024 },
      maxBodyKb: api.max_body_kb,
      enabled: () => api.enabled,
      logger: this.logger.child({ module: 'api' }),
    });
  }

  /** `/mcp`: Muninn as an MCP server, acting as the API token's user. */
  private mcpRouter() {
    const s = this.services;
    const chat = this.chat;
    const authCtx = this.systemCtx('mcp-auth');
    const ask: McpAsk | null = chat
      ? {
          ask: async (ctx, text, signal) => {
            const user = await s.users.get(authCtx, ctx.userId!);
            const tokenId = ctx.actor.kind === 'user' ? (ctx.actor.tokenId ?? '') : '';
            const request = { model: DEFAULT_MODEL, messages: [{ role: 'user' as const, text, images: [] }], stream: false, includeUsage: false, maxTokens: null, tools: [], toolChoice: null };
            const outcome = await chat.api.channel.complete({ user, tokenId }, request, MCP_SERVE_CHANNEL, () => undefined, signal);
            return outcome.text;
          },
        }
      : null;
    const serve = new McpServeService({
      tools: createServedTools({ search: s.memory.search, memories: s.memories, sessions: s.sessions, beats: chat?.beats.beats ?? null, ask }),
      db: this.db,
      audit: s.audit,
      activation: s.plugins,
      timeoutMs: this.config.tools.timeout_ms,
      maxOutputChars: this.config.tools.max_output_chars,
    });
    const router = express.Router();
    router.use(mcpOAuthCallbackRouter({ complete: (code, state) => this.mcpOAuth.callback(code, state), logger: this.logger.child({ module: 'mcp-oauth' }) }));
    router.use(mcpRouter({
      serve,
      authenticate: async (token) => {
        const found = await s.tokens.verify(authCtx, token);
        return found ? { user: found.user, tokenId: found.apiToken.id } : null;
      },
      rateLimit: chat ? (tokenId) => chat.api.rateLimit.consume(tokenId) : undefined,
      maxBodyKb: this.config.server.body_limit_kb,
      version: appVersion(),
      logger: this.logger.child({ module: 'mcp-serve' }),
    }));
    return router;
  }

  private metricsEndpoint() {
    return this.config.metrics.enabled ? { render: () => this.metrics.render(), check: metricsAccess(this.config.metrics.token).check } : undefined;
  }

  /** Health, readiness and metrics only, for processes without the API (`--role worker`). */
  async listenOps(): Promise<string> {
    if (this.chat && this.redis) this.metrics.useQueues(this.queueInspector(this.chat));
    this.http = await startOpsServer({
      host: this.config.server.host,
      port: this.config.server.port,
      readiness: () => this.serviceReadiness(),
      metrics: this.metricsEndpoint(),
      logger: this.logger.child({ module: 'http' }),
    });
    this.stack.add('ops http server', () => this.http?.close());
    this.logger.info({ url: this.http.url }, `health and metrics on ${this.http.url}`);
    return this.http.url;
  }

  /** Runs the queue workers (turns, model calls, deliveries, summarizer, maintenance, heartbeat) in this process. */
  async startWorkers(): Promise<void> {
    const chat = this.requireChat('Workers');
    if (this.workersStarted) return;
    this.workersStarted = true;
    const workers = await startChatWorkers(chat, { config: this.config, logger: this.logger, db: this.db, memory: this.services.memory });
    this.stack.add('workers', () => workers.dispose((name, err) => this.logger.error({ err, resource: name }, 'error while stopping')));
    const exportWorker = await startUserExportWorker(chat.queueEnv, this.services.userData);
    this.stack.add('export worker', () => exportWorker.close());
    await this.services.mcp.start();
    this.logger.info('workers started');
  }

  /**
   * Follows the channels' plugin settings in this process; a process whose role may hold channels
   * (`channels.run_on`) runs those whose cluster-wide lease it takes (Telegram, WhatsApp, …).
   */
  async startChannels(role: Role = 'all'): Promise<void> {
    const chat = this.requireChat('Channels');
    if (this.channelsStarted) return;
    this.channelsStarted = true;
    const runOn = this.config.channels.run_on;
    const contend = role === 'all' || runOn === 'any' || runOn === role;
    const channels = await startChatChannels(chat, {
      plugins: this.services.plugins,
      logger: this.logger,
      config: this.config,
      contend,
    });
    this.stack.add('channels', () =>
      channels.dispose((name, err) => this.logger.error({ err, resource: name }, 'error while stopping')),
    );
  }

  /** Starts what the role runs: the API, the workers and/or the channels (`muninn serve --role`). */
  async run(role: Role): Promise<void> {
    const plan = ROLES[role];
    this.starting = true;
    const search = this.services.memory.prepareSearch(this.systemCtx('memory'));
    if (plan.api) await this.listen();
    else await this.listenOps();
    if (plan.workers) await this.startWorkers();
    if (plan.channels) await this.startChannels(role);
    await search;
    this.starting = false;
  }

  private requireChat(what: string): ChatServices {
    if (!this.chat) throw new Error(`${what} need Redis`);
    return this.chat;
  }

  /** Database and Redis checks for /readyz and doctor. */
  async readiness(): Promise<Record<string, string | null>> {
    const check = async (fn: () => Promise<unknown>) => {
      try {
        await fn();
        return null;
      } catch (err) {
        return (err as Error).message;
      }
    };
    const redisClient = this.redis ? this.redis : null;
    return {
      database: await check(() => this.db.ping()),
      redis: redisClient ? await check(() => redisClient.ping()) : 'not connected',
    };
  }

  /** /readyz: the database and Redis answer, start-up work is done and the process is not stopping. */
  private async serviceReadiness(): Promise<Record<string, string | null>> {
    return {
      ...(await this.readiness()),
      startup: this.stopping ? 'shutting down' : this.starting ? 'starting' : null,
    };
  }

  /**
   * A clean stop (SIGTERM/SIGINT): /readyz turns 503 at once, channels stop taking messages, running turns
   * get `shutdown_timeout_ms` to finish before they are handed back to the queue, subscriptions are closed
   * (1001 going away), then Redis (the managed server too) and the database.
   */
  async shutdown(): Promise<void> {
    this.stopping = true;
    await this.dispose();
  }

  async dispose(): Promise<void> {
    await this.stack.dispose((name, err) => this.logger.error({ err, resource: name }, 'error while shutting down'));
    this.logger.flush?.();
  }
}

/**
 * The managed Redis started (when no `redis.url` is set) and this process's main connection ready; on a
 * failure whatever did start is stopped again. `close` undoes both, for a start-up that fails elsewhere.
 */
async function connectRedis(
  config: AppConfig,
  logger: Logger,
): Promise<{ redis: RedisConnections; main: Redis; changesSub: Redis; managed: ManagedRedis | null; close: () => Promise<void> }> {
  let url = config.redis.url;
  let managed: ManagedRedis | null = null;
  if (!url) {
    managed = new ManagedRedis({
      binary: config.redis.managed_binary,
      dir: path.join(config.data_dir, 'redis'),
      port: config.redis.managed_port,
      logger: logger.child({ module: 'redis' }),
    });
    url = await managed.start();
  }
  const redis = new RedisConnections(url, logger.child({ module: 'redis' }));
  const close = async () => {
    await redis.close();
    await managed?.stop();
  };
  const main = redis.create('main');
  const changesSub = redis.create('changes-sub');
  try {
    await redis.waitReady();
  } catch (err) {
    await close();
    throw err;
  }
  logger.info({ redis: safeRedisUrl(url) }, 'connected to Redis');
  return { redis, main, changesSub, managed, close };
}

/** Every secret value the config holds is redacted from logs. */
function registerConfigSecrets(redactor: SecretRedactor, config: AppConfig): void {
  redactor.add(config.channels.telegram.bot_token);
  redactor.add(config.metrics.token);
  for (const provider of Object.values(config.ai.providers)) {
    if (provider.api_key_env) redactor.add(process.env[provider.api_key_env]);
  }
  for (const name of ['MUNINN_MODEL_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY', 'NVIDIA_API_KEY', 'MUNINN_TOKEN', 'MUNINN_SECRET_KEY']) {
    redactor.add(process.env[name]);
  }
  if (config.redis.url) {
    const password = /\/\/[^:@/]*:([^@/]+)@/.exec(config.redis.url)?.[1];
    redactor.add(password);
  }
  if (config.database.url) {
    const password = /\/\/[^:@/]*:([^@/]+)@/.exec(config.database.url)?.[1];
    redactor.add(password);
  }
}
