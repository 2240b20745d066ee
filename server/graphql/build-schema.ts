import 'reflect-metadata';
import { assertValidSchema, type GraphQLSchema } from 'graphql';
import { createPubSub } from '@graphql-yoga/subscription';
import { buildSchema, type ContainerType, type PubSub } from 'type-graphql';
import { authChecker } from './auth-checker';
import { DateTimeISO } from './date-scalar';
import { markPlainFields } from './plain-fields';
import { validateArgs } from './validate-args';
import { AdminResolver } from './resolvers/admin.resolver';
import { ApiTokenResolver } from './resolvers/api-token.resolver';
import { MemoryResolver } from './resolvers/memory.resolver';
import { SessionResolver } from './resolvers/session.resolver';
import { UserResolver } from './resolvers/user.resolver';
import { ChatResolver } from './resolvers/chat.resolver';
import { VoiceResolver } from './resolvers/voice.resolver';
import { ToolResolver } from './resolvers/tool.resolver';
import { PairingResolver } from './resolvers/pairing.resolver';
import { ChannelResolver } from './resolvers/channel.resolver';
import { QueueResolver } from './resolvers/queue.resolver';
import { BeatResolver } from './resolvers/beat.resolver';
import { SkillResolver } from './resolvers/skill.resolver';
import { WebhookResolver } from './resolvers/webhook.resolver';
import { UserDataResolver } from './resolvers/user-data.resolver';
import { McpResolver } from './resolvers/mcp.resolver';
import { SelfLinkResolver } from './resolvers/self-link.resolver';
import { DocumentResolver } from './resolvers/document.resolver';
import { ModelResolver } from './resolvers/model.resolver';
import { ServerInfoResolver } from './resolvers/server-info.resolver';
import { MemoryReindexResolver } from './resolvers/memory-reindex.resolver';
import { BudgetResolver } from './resolvers/budget.resolver';
import { ChannelSetupResolver } from './resolvers/channel-setup.resolver';

/** Every resolver class, in a fixed order so the emitted SDL is stable. */
export const RESOLVERS = [UserResolver, ApiTokenResolver, SessionResolver, MemoryResolver, AdminResolver, ChatResolver, ToolResolver, PairingResolver, ChannelResolver, ChannelSetupResolver, QueueResolver, BeatResolver, SkillResolver, WebhookResolver, ModelResolver, ServerInfoResolver, MemoryReindexResolver, DocumentResolver, SelfLinkResolver, UserDataResolver, McpResolver, VoiceResolver, BudgetResolver] as const;

/** Resolver instances by class; the composition root fills it. */
export type ResolverRegistry = Map<Function, object>;

function containerOf(registry: ResolverRegistry | null): ContainerType {
  return {
    get(cls: Function) {
      const instance = registry?.get(cls);
      if (!instance) throw new Error(`No resolver instance registered for ${cls.name}`);
      return instance;
    },
  } as ContainerType;
}

/**
 * Builds the executable schema; without a registry it can only be printed (npm run schema). type-graphql's
 * own check runs the full introspection query over the new schema (about a tenth of the server's start-up CPU):
 * printing the schema keeps it, so `npm run schema` and the schema drift check still catch what it finds,
 * and the server validates its schema the way graphql-js does before the first request, at once.
 */
export async function buildAppSchema(registry: ResolverRegistry | null, pubSub?: PubSub): Promise<GraphQLSchema> {
  markPlainFields();
  const schema = await buildSchema({
    resolvers: [...RESOLVERS] as unknown as [Function, ...Function[]],
    container: containerOf(registry),
    authChecker,
    authMode: 'error',
    scalarsMap: [{ type: Date, scalar: DateTimeISO }],
    validateFn: validateArgs,
    // Session events use their own Redis-backed source (a `subscribe` function); type-graphql still
    // requires a PubSub, which serves topic-based subscriptions only.
    pubSub: pubSub ?? createPubSub(),
    skipCheck: registry !== null,
  });
  assertValidSchema(schema);
  return schema;
}
