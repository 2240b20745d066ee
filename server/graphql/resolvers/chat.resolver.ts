import { Arg, Authorized, Ctx as GqlCtx, Field, Float, ID, InputType, Int, Mutation, ObjectType, Query, Resolver, Root, Subscription, registerEnumType } from 'type-graphql';
import { MaxLength, ValidateNested } from '../validators';
import { TrustLevel } from '../../common/trust';
import type { WebChannel } from '../../channels/web/web-channel';
import { MAX_TEXT_CHARS } from '../../channels/web/web-channel';
import { ChatClient } from '../../channels/web/session-stream-transport';
import type { SessionRotation, TurnScheduler } from '../../modules/conversation';
import type { SessionEvent } from '../../modules/events';
import { Session, SessionMaintenanceService, SessionService, SessionStatus } from '../../modules/sessions';
import type { CompactionService } from '../../modules/summarizer';
import { ConflictError } from '../../common/errors';
import type { UsageGroupBy, UsageService } from '../../modules/usage';
import type { GraphQLContext } from '../context';
import { SessionEventUnion } from '../session-event.types';

@InputType()
class ImageInput {
  @Field({ description: 'image/png, image/jpeg, image/webp or image/gif' })
  @MaxLength(100)
  mimeType!: string;

  @Field({ description: 'Base64 of the image bytes (at most 5 MiB).' })
  dataBase64!: string;
}

/** Which client a message comes from; it picks the default session (`web:<userId>` or `tui:<userId>`). */
registerEnumType(ChatClient, { name: 'ChatChannel', description: 'The client channel of sendMessage: WEB (web chat) or TUI (muninn chat).' });

@InputType()
class SendMessageInput {
  @Field(() => ID, { nullable: true, description: 'One of your ACTIVE sessions; default your active session of the channel.' })
  sessionId?: string | null;

  @Field(() => ChatClient, { nullable: true, defaultValue: ChatClient.WEB, description: 'WEB (default) or TUI (the terminal client, session tui:<userId>).' })
  channel?: ChatClient | null;

  @Field()
  @MaxLength(MAX_TEXT_CHARS)
  text!: string;

  @Field(() => [ImageInput], { nullable: true })
  @ValidateNested({ each: true })
  images?: ImageInput[] | null;
}

@ObjectType({ description: 'A message handed to the assistant. Follow sessionEvents(sessionId) for the reply.' })
export class Turn {
  @Field(() => ID)
  sessionId!: string;

  @Field(() => ID, { nullable: true, description: 'The stored message; null for slash commands.' })
  messageId!: string | null;

  @Field({ description: 'QUEUED while waiting for the assistant; DONE for commands answered at once.' })
  status!: string;

  @Field({ description: 'True when the same platform message was already received.' })
  duplicate!: boolean;

  @Field(() => String, { nullable: true, description: 'Immediate answer (slash commands).' })
  reply!: string | null;
}

enum UsageGrouping {
  USER = 'user',
  SESSION = 'session',
  MODEL = 'model',
  DAY = 'day',
}
registerEnumType(UsageGrouping, { name: 'UsageGrouping' });

@ObjectType()
class UsageRow {
  @Field({ description: 'User id, session id, provider/model or YYYY-MM-DD, per groupBy.' })
  key!: string;

  @Field(() => Int)
  calls!: number;

  @Field(() => Int)
  inputTokens!: number;

  @Field(() => Int)
  outputTokens!: number;

  @Field(() => Int)
  cacheReadTokens!: number;

  @Field(() => Int)
  cacheWriteTokens!: number;

  @Field({ description: 'Some counts were estimated, not reported by the provider.' })
  estimated!: boolean;

  @Field(() => Float, { description: 'Cost in USD of the calls in this row (provider-reported, else from the price table); calls of models without a price count 0.' })
  costUsd!: number;

  @Field(() => Int, { description: 'Calls of models without a price in the pricing table: their tokens are counted, their cost is not.' })
  unpricedCalls!: number;
}

interface SubscriptionArgs {
  sessionId: string;
  afterSeq?: number | null;
}

/** Chat over GraphQL: sendMessage, live replies, stopping and rotating sessions, usage. */
@Resolver()
export class ChatResolver {
  constructor(
    private readonly web: WebChannel,
    private readonly sessionService: SessionService,
    private readonly rotation: SessionRotation,
    private readonly scheduler: TurnScheduler,
    private readonly usageService: UsageService,
    private readonly compaction: CompactionService,
    private readonly maintenance: SessionMaintenanceService,
  ) {}

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Turn)
  sendMessage(@Arg('input') input: SendMessageInput, @GqlCtx() { ctx, viewer }: GraphQLContext): Promise<Turn> {
    return this.web.send(ctx, input, input.channel ?? ChatClient.WEB, viewer);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Boolean, { description: 'Aborts the running turn of a session; false when none was running.' })
  async stopTurn(@Arg('sessionId', () => ID) sessionId: string, @GqlCtx() { ctx }: GraphQLContext): Promise<boolean> {
    await this.sessionService.getVisible(ctx, sessionId);
    return this.scheduler.requestAbort(sessionId, 'stopTurn');
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Session, { description: 'Archives the session and starts an empty one with the same key.' })
  async newSession(@Arg('sessionId', () => ID) sessionId: string, @GqlCtx() { ctx }: GraphQLContext): Promise<Session> {
    const session = await this.sessionService.getVisible(ctx, sessionId);
    if (session.status !== SessionStatus.ACTIVE) throw new ConflictError('This session is already archived.');
    return (await this.rotation.rotate(ctx, session, 'new', { stopTurn: 'a new session was started' })).session;
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Session, {
    description: 'Summarises an ACTIVE session (memory flush, five-section summary memory), archives it and returns the new session seeded with the summary and the last turns. CONFLICT while a turn runs.',
  })
  async compactSession(
    @Arg('sessionId', () => ID) sessionId: string,
    @Arg('instructions', () => String, { nullable: true, description: 'What the summary should focus on.' }) instructions: string | null,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<Session> {
    const session = await this.sessionService.getVisible(ctx, sessionId);
    return (await this.compaction.compactNow(ctx, session, instructions, '🗜️ This session was compacted on request; it continues in a new session.')).session;
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Session, { description: 'Archives a session (it stays readable and exportable); the next message starts a new one.' })
  archiveSession(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<Session> {
    return this.maintenance.archive(ctx, id);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Boolean, { description: 'Deletes a session with its messages and images; memories written from it stay.' })
  deleteSession(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<boolean> {
    return this.maintenance.remove(ctx, id);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => String, {
    description: 'The transcript as JSON Lines: one object per message, oldest first (id, sessionId, role, status, content, createdAt, userId, turnId, replyToId, toolCalls, toolCallId, tokens, images as metadata without data).',
  })
  exportSession(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<string> {
    return this.maintenance.exportJsonl(ctx, id);
  }

  @Authorized(TrustLevel.MEMBER)
  @Query(() => [UsageRow], { description: 'Token usage in [from, to): your own, or everyone\'s for ADMIN and above.' })
  usage(
    @Arg('from', () => Date) from: Date,
    @Arg('to', () => Date) to: Date,
    @Arg('groupBy', () => UsageGrouping, { defaultValue: UsageGrouping.DAY }) groupBy: UsageGrouping,
    @Arg('userId', () => ID, { nullable: true }) userId: string | null,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<UsageRow[]> {
    return this.usageService.summary(ctx, from, to, groupBy as UsageGroupBy, userId);
  }

  @Authorized(TrustLevel.MEMBER)
  @Subscription(() => SessionEventUnion, {
    description: 'Events of a session you may read: kept events after afterSeq first, then live ones.',
    subscribe: ({ args, context }) => {
      const { sessionId, afterSeq } = args as SubscriptionArgs;
      const { ctx, streams } = context as GraphQLContext;
      if (!streams) throw new Error('subscriptions are not available on this transport');
      return streams.sessionEvents(ctx, sessionId, afterSeq ?? 0);
    },
  })
  sessionEvents(
    @Root() event: SessionEvent,
    @Arg('sessionId', () => ID) _sessionId: string,
    @Arg('afterSeq', () => Int, { nullable: true, description: 'Last seq you saw; 0 or null for everything kept.' }) _afterSeq: number | null,
  ): SessionEvent {
    return event;
  }
}
