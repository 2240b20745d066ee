import 'reflect-metadata';
import path from 'node:path';
import type { DestinationStream } from 'pino';
import type { DataSource } from 'typeorm';
import type { AppConfig } from './config';
import type { Clock } from './common/clock';
import { Ctx } from './common/ctx';
import { DisposableStack } from './common/disposable';
import { createLogger, type Logger } from './common/logger';
import { SecretRedactor } from './common/secret-redactor';
import { TrustLevel } from './common/trust';
import { Db } from './persistence/db';
import { openDatabase } from './persistence/data-source';
import { ManagedRedis } from './redis/managed-redis';
import { RedisConnections, safeRedisUrl } from './redis/redis-connections';
import { AuditService } from './modules/audit';
import { ApiTokenService, OwnerBootstrap } from './modules/auth';
import type { MemoryService } from './modules/memory';
import { PluginSettingService } from './modules/plugins';
import { SessionService } from './modules/sessions';
import { UserService } from './modules/users';
import { buildAppSchema, type ResolverRegistry } from './graphql/build-schema';
import { createContextFactory } from './graphql/context-factory';
import { createQueryLimits } from './graphql/limits';
import { AdminResolver } from './graphql/resolvers/admin.resolver';
import { ApiTokenResolver } from './graphql/resolvers/api-token.resolver';
import { MemoryResolver } from './graphql/resolvers/memory.resolver';
import { SessionResolver } from './graphql/resolvers/session.resolver';
import { UserResolver } from './graphql/resolvers/user.resolver';
import { ChatResolver } from './graphql/resolvers/chat.resolver';
import { ToolResolver } from './graphql/resolvers/tool.resolver';
import { ChatRuntime } from './composition/chat-runtime';
import { MemoryLayer } from './composition/memory-layer';
import { PairingService } from './modules/pairing';
import { PairingResolver } from './graphql/resolvers/pairing.resolver';
import { ChannelResolver } from './graphql/resolvers/channel.resolver';
import { ChannelOverview } from './channels/policies/channel-overview';
import { guardSubscription } from './graphql/subscription-guard';
import { startHttpServer, type RunningHttpServer } from './http/http-server';
import { QueueService } from './modules/queues';
import { QueueResolver } from './graphql/resolvers/queue.resolver';
import { BullQueueInspector, queueNames } from '../jobs/queue-inspector';

export interface AppOptions {
  config: AppConfig;
  /** Where logs go. @default stdout */
  logDestination?: DestinationStream;
  /** Connect to Redis (managed or REDIS_URL). CLI commands that only touch the database turn it off. @default true */
  redis?: boolean;
  /** Time for session resets and retention; tests move it forward. @default wall-clock time */
  clock?: Clock;
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
}

/**
 * The composition root: the one place that builds the object graph of a process. `createApp` opens the
 * database (running migrations) and Redis; `listen` starts HTTP; `dispose` releases everything in reverse.
 */
export class App {
  private http: RunningHttpServer | null = null;

  private constructor(
    readonly config: AppConfig,
    readonly logger: Logger,
    readonly redactor: SecretRedactor,
    readonly dataSource: DataSource,
    readonly db: Db,
    readonly redis: RedisConnections | null,
    readonly services: Services,
    /** Queues, agent, pipeline and channels; null when the app runs without Redis (DB-only CLI commands). */
    readonly chat: ChatRuntime | null,
    readonly appliedMigrations: string[],
    private readonly stack: DisposableStack,
  ) {}

  static async create(options: AppOptions): Promise<App> {
    const { config } = options;
    const redactor = new SecretRedactor();
    registerConfigSecrets(redactor, config);
    const logger = createLogger({ level: config.log.level, destination: options.logDestination, redactor });
    const stack = new DisposableStack();
    try {
      const { dataSource, applied } = await openDatabase(config);
      stack.add('database', () => dataSource.destroy());
      if (applied.length) logger.info({ migrations: applied }, 'applied database migrations');
      const db = new Db(dataSource);

      let redis: RedisConnections | null = null;
      if (options.redis !== false) {
        let url = config.redis.url;
        if (!url) {
          const managed = new ManagedRedis({
            binary: config.redis.managed_binary,
            dir: path.join(config.data_dir, 'redis'),
            port: config.redis.managed_port,
            logger: logger.child({ module: 'redis' }),
          });
          url = await managed.start();
          stack.add('managed redis', () => managed.stop());
        }
        redis = new RedisConnections(url, logger.child({ module: 'redis' }));
        stack.add('redis clients', () => redis!.close());
        redis.create('main');
        await redis.waitReady();
        logger.info({ redis: safeRedisUrl(url) }, 'connected to Redis');
      }

      const audit = new AuditService(db);
      const users = new UserService(db, audit, config.default_trust as TrustLevel);
      const tokens = new ApiTokenService(db, users, audit);
      const memory = MemoryLayer.create({ config, db, audit, logger });
      stack.add('memory', () => memory.dispose());
      const services: Services = {
        audit,
        users,
        tokens,
        sessions: new SessionService(db),
        memories: memory.service,
        memory,
        plugins: new PluginSettingService(db, audit),
        ownerBootstrap: new OwnerBootstrap(users, tokens, config.data_dir),
      };
      let chat: ChatRuntime | null = null;
      if (redis) {
        chat = await ChatRuntime.create({
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
          clock: options.clock,
        });
        const runtime = chat;
        stack.add('chat runtime', () => runtime.dispose());
      }
      return new App(config, logger, redactor, dataSource, db, redis, services, chat, applied, stack);
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

  /** Makes sure the OWNER exists, then serves GraphQL. */
  async listen(): Promise<string> {
    const ctx = this.systemCtx('startup');
    await this.services.ownerBootstrap.ensureOwner(ctx);
    const s = this.services;
    const pageSize = this.config.graphql.max_page_size;
    const registry: ResolverRegistry = new Map<Function, object>([
      [UserResolver, new UserResolver(s.users, s.tokens, pageSize)],
      [ApiTokenResolver, new ApiTokenResolver(s.tokens)],
      [SessionResolver, new SessionResolver(s.sessions, pageSize)],
      [MemoryResolver, new MemoryResolver(s.memories, pageSize, s.memory.search)],
      [AdminResolver, new AdminResolver(s.plugins, s.audit, pageSize)],
    ]);
    const chat = this.chat;
    if (chat) {
      registry.set(ChatResolver, new ChatResolver(chat.web, s.sessions, chat.lifecycle, chat.turnQueue, chat.events, chat.usage, chat.compaction, chat.sessionMaintenance));
      registry.set(ToolResolver, new ToolResolver(chat.tools.registry, chat.tools.approvals));
    }
    registry.set(PairingResolver, new PairingResolver(new PairingService(this.db, s.audit, s.users, chat?.outbound ?? null)));
    const overview = chat ? new ChannelOverview({ registry: chat.channels, settings: s.plugins, api: this.config.channels }) : null;
    if (overview) registry.set(ChannelResolver, new ChannelResolver(overview));
    if (chat && this.redis) {
      const inspector = new BullQueueInspector(this.redis.create('queue-inspector'), `${this.config.redis.prefix}:bull`, queueNames(chat.router.providers().map((p) => p.name)));
      registry.set(QueueResolver, new QueueResolver(new QueueService(inspector, s.audit)));
    }
    const schema = await buildAppSchema(registry, undefined);
    const explorer = this.config.server.explorer && process.env.NODE_ENV !== 'production';
    this.http = await startHttpServer({
      host: this.config.server.host,
      port: this.config.server.port,
      bodyLimitKb: this.config.server.body_limit_kb,
      explorer,
      schema,
      limits: createQueryLimits(this.config.graphql),
      logger: this.logger.child({ module: 'http' }),
      contextFor: createContextFactory({
        tokens: s.tokens,
        users: s.users,
        logger: this.logger,
        streams: chat
          ? {
              sessionEvents: async (ctx, sessionId, afterSeq) => {
                await s.sessions.getVisible(ctx, sessionId);
                const stillAllowed = async () => {
                  const actor = ctx.actor;
                  if (actor.kind !== 'user' || !actor.tokenId) return false;
                  const user = await s.tokens.currentUser(ctx, actor.tokenId);
                  if (!user) return false;
                  const now = new Ctx({ actor: { ...actor, trust: user.trust }, logger: ctx.logger, channel: ctx.channel });
                  await s.sessions.getVisible(now, sessionId);
                  return true;
                };
                return guardSubscription(chat.events.subscribe(sessionId, afterSeq), stillAllowed, this.config.graphql.subscription_recheck_ms);
              },
              channelStatus: (ctx) => overview!.watch(ctx),
            }
          : undefined,
      }),
      readiness: () => this.readiness(),
      webhooks: () =>
        (chat?.channels.all() ?? [])
          .filter((t) => chat?.channels.isStarted(t.channel))
          .map((t) => t.webhook?.() ?? null)
          .filter((h): h is NonNullable<typeof h> => h !== null),
    });
    this.stack.add('http server', () => this.http?.close());
    this.logger.info({ url: `${this.http.url}/graphql`, explorer }, `Muninn is listening on ${this.http.url}/graphql`);
    return this.http.url;
  }

  /** Runs the queue workers (turns, model calls, deliveries) in this process. */
  async startWorkers(): Promise<void> {
    if (!this.chat) throw new Error('Workers need Redis');
    await this.chat.startWorkers();
    this.logger.info('workers started');
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

  async dispose(): Promise<void> {
    await this.stack.dispose((name, err) => this.logger.error({ err, resource: name }, 'error while shutting down'));
    this.logger.flush?.();
  }
}

/** Every secret value the config holds is redacted from logs. */
function registerConfigSecrets(redactor: SecretRedactor, config: AppConfig): void {
  redactor.add(config.channels.telegram.bot_token);
  for (const provider of Object.values(config.ai.providers)) {
    if (provider.api_key_env) redactor.add(process.env[provider.api_key_env]);
  }
  for (const name of ['MUNINN_MODEL_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY', 'NVIDIA_API_KEY', 'MUNINN_TOKEN']) {
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
