import { Ctx } from '../common/ctx';
import { NO_METRICS, type Metrics } from '../common/metrics';
import type { ChannelOverview } from '../channels/policies/channel-overview';
import type { WebChannel } from '../channels/web/web-channel';
import type { WebVoiceNotes } from '../channels/web/web-voice';
import type { AuditService } from '../modules/audit';
import type { BeatRunEvent, BeatRunFeed, BeatRunner, BeatService } from '../modules/beats';
import type { ApiTokenService } from '../modules/auth';
import type { SessionRotation, TurnScheduler } from '../modules/conversation';
import type { SessionEventSource } from '../modules/events';
import type { MemoryReindexCommands, MemoryService } from '../modules/memory';
import type { DocumentService, KnowledgeSearchService } from '../modules/documents';
import type { ProviderHealthService } from '../modules/models';
import type { PairingService } from '../modules/pairing';
import type { PluginSettingService } from '../modules/plugins';
import type { JobProgressService, QueueService } from '../modules/queues';
import type { SkillService, SkillSyncCommands } from '../modules/skills';
import type { WebhookService } from '../modules/webhooks';
import type { McpService } from '../modules/mcp';
import type { IdentityLinkService } from '../modules/linking';
import type { ChannelSetupService } from '../modules/channel-setup';
import type { SessionMaintenanceService, SessionService } from '../modules/sessions';
import type { CompactionService } from '../modules/summarizer';
import type { ToolApprovalService, ToolRegistry } from '../modules/tools';
import type { UsageService } from '../modules/usage';
import type { BudgetService } from '../modules/budgets';
import type { UserService } from '../modules/users';
import type { UserDataService } from '../modules/userdata';
import type { ResolverRegistry } from './build-schema';
import type { GraphQLStreams } from './context';
import { AdminResolver } from './resolvers/admin.resolver';
import { ApiTokenResolver } from './resolvers/api-token.resolver';
import { BeatResolver } from './resolvers/beat.resolver';
import { ChannelResolver } from './resolvers/channel.resolver';
import { ChannelSetupResolver } from './resolvers/channel-setup.resolver';
import { ChatResolver } from './resolvers/chat.resolver';
import { VoiceResolver } from './resolvers/voice.resolver';
import { MemoryResolver } from './resolvers/memory.resolver';
import { PairingResolver } from './resolvers/pairing.resolver';
import { QueueResolver } from './resolvers/queue.resolver';
import { SkillResolver } from './resolvers/skill.resolver';
import { WebhookResolver } from './resolvers/webhook.resolver';
import { UserDataResolver } from './resolvers/user-data.resolver';
import { McpResolver } from './resolvers/mcp.resolver';
import { SelfLinkResolver } from './resolvers/self-link.resolver';
import { DocumentResolver } from './resolvers/document.resolver';
import { ModelResolver } from './resolvers/model.resolver';
import { ServerInfoResolver, type ServerInfoSource } from './resolvers/server-info.resolver';
import { MemoryReindexResolver } from './resolvers/memory-reindex.resolver';
import { BudgetResolver } from './resolvers/budget.resolver';
import { SessionResolver } from './resolvers/session.resolver';
import { ToolResolver } from './resolvers/tool.resolver';
import { UserResolver } from './resolvers/user.resolver';
import { countedStream } from './counted-stream';
import { guardSubscription } from './subscription-guard';
import { access } from '../common/access';

/** The items of `source` that pass `keep`. */
async function* filterStream<T>(source: AsyncIterableIterator<T>, keep: (item: T) => boolean): AsyncGenerator<T> {
  try {
    for await (const item of source) if (keep(item)) yield item;
  } finally {
    await source.return?.();
  }
}

/** The services the API serves (the chat part is absent in processes without Redis). */
export interface ApiServices {
  users: UserService;
  tokens: ApiTokenService;
  sessions: SessionService;
  memories: MemoryService;
  /** `searchMemories`: memories and document passages in one search. */
  knowledgeSearch: KnowledgeSearchService;
  plugins: PluginSettingService;
  audit: AuditService;
  pairing: PairingService;
  /** Export and erasure of a user's data. */
  userData: UserDataService;
  /** Queue inspection (needs Redis). */
  queues: QueueService | null;
  /** MCP servers and users' credentials. */
  mcp: McpService;
  /** Version and start time of this process (`serverInfo`). */
  serverInfo: { version: string; startedAt: Date };
  chat: {
    web: WebChannel;
    rotation: SessionRotation;
    turnControl: TurnScheduler;
    events: SessionEventSource;
    usage: UsageService;
    budgets: BudgetService;
    compaction: CompactionService;
    sessionMaintenance: SessionMaintenanceService;
    tools: { registry: ToolRegistry; approvals: ToolApprovalService };
    overview: ChannelOverview;
    channelSetups: ChannelSetupService;
    beats: BeatService;
    beatRunner: BeatRunner;
    beatFeed: BeatRunFeed;
    skills: { service: SkillService; syncCommands: SkillSyncCommands };
    jobProgress: JobProgressService;
    webhooks: WebhookService;
    selfLink: IdentityLinkService;
    /** Documents (the `ingest` queue needs Redis). */
    documents: DocumentService | null;
    providerHealth: ProviderHealthService;
    memoryReindex: MemoryReindexCommands;
    webVoice: WebVoiceNotes;
  } | null;
}

/** Resolver instances for the schema, each built once from the process's services. */
export function createResolverRegistry(s: ApiServices, maxPageSize: number): ResolverRegistry {
  const registry: ResolverRegistry = new Map<Function, object>([
    [UserResolver, new UserResolver(s.users, s.tokens, maxPageSize)],
    [ApiTokenResolver, new ApiTokenResolver(s.tokens)],
    [SessionResolver, new SessionResolver(s.sessions, maxPageSize)],
    [MemoryResolver, new MemoryResolver(s.memories, maxPageSize, s.knowledgeSearch)],
    [AdminResolver, new AdminResolver(s.plugins, s.audit, maxPageSize)],
    [PairingResolver, new PairingResolver(s.pairing)],
    [UserDataResolver, new UserDataResolver(s.userData)],
  ]);
  const chat = s.chat;
  const info: ServerInfoSource = { ...s.serverInfo, usingMockModel: () => chat?.providerHealth.usingMock ?? null };
  registry.set(ServerInfoResolver, new ServerInfoResolver(info));
  if (chat) {
    registry.set(ModelResolver, new ModelResolver(chat.providerHealth));
    registry.set(MemoryReindexResolver, new MemoryReindexResolver(chat.memoryReindex));
    registry.set(VoiceResolver, new VoiceResolver(chat.webVoice));
    registry.set(ChatResolver, new ChatResolver(chat.web, s.sessions, chat.rotation, chat.turnControl, chat.usage, chat.compaction, chat.sessionMaintenance));
    registry.set(ToolResolver, new ToolResolver(chat.tools.registry, chat.tools.approvals));
    registry.set(ChannelResolver, new ChannelResolver(chat.overview));
    registry.set(ChannelSetupResolver, new ChannelSetupResolver(chat.channelSetups));
    registry.set(BeatResolver, new BeatResolver(chat.beats, chat.beatRunner, maxPageSize));
    registry.set(SkillResolver, new SkillResolver(chat.skills.service, chat.skills.syncCommands));
    registry.set(WebhookResolver, new WebhookResolver(chat.webhooks));
    registry.set(SelfLinkResolver, new SelfLinkResolver(chat.selfLink));
    if (chat.documents) registry.set(DocumentResolver, new DocumentResolver(chat.documents, maxPageSize));
    registry.set(BudgetResolver, new BudgetResolver(chat.budgets));
  }
  if (s.queues) registry.set(QueueResolver, new QueueResolver(s.queues));
  registry.set(McpResolver, new McpResolver(s.mcp));
  return registry;
}

/**
 * The subscription sources: a session's events for whoever may read the session, re-checked every
 * `recheckMs` (a revoked token or a lowered trust ends the stream), and channel status changes.
 */
export function createStreams(s: ApiServices, recheckMs: number, metrics: Metrics = NO_METRICS): GraphQLStreams | undefined {
  const chat = s.chat;
  if (!chat) return undefined;
  return {
    sessionEvents: async (ctx, sessionId, afterSeq) => {
      await s.sessions.getVisible(ctx, sessionId);
      const stillAllowed = async () => {
        const actor = ctx.actor;
        if (actor.kind !== 'user' || !actor.tokenId) return false;
        const user = await s.tokens.currentUser(ctx, actor.tokenId);
        if (!user) return false;
        await s.sessions.getVisible(new Ctx({ actor: { ...actor, trust: user.trust }, logger: ctx.logger, channel: ctx.channel }), sessionId);
        return true;
      };
      return countedStream(guardSubscription(chat.events.subscribe(sessionId, afterSeq), stillAllowed, recheckMs), metrics, 'sessionEvents');
    },
    channelStatus: (ctx) => countedStream(chat.overview.watch(ctx), metrics, 'channelStatus'),
    beatRuns: async (ctx, beatId) => {
      if (beatId) await chat.beats.get(ctx, beatId);
      const actor = ctx.actor;
      const visible = (e: BeatRunEvent) => (!beatId || e.run.beatId === beatId) && (access.seesEveryone(ctx) || (actor.kind === 'user' && e.ownerId === actor.userId));
      const stillAllowed = async () => {
        if (actor.kind !== 'user' || !actor.tokenId) return false;
        const user = await s.tokens.currentUser(ctx, actor.tokenId);
        return !!user && user.trust === actor.trust;
      };
      return guardSubscription(filterStream(chat.beatFeed.subscribe(), visible), stillAllowed, recheckMs);
    },
    jobProgress: (ctx, jobId) => chat.jobProgress.follow(ctx, jobId),
  };
}
