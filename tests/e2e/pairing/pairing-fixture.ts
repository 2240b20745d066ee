import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { graphql, parse, subscribe, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { createPubSub } from '@graphql-yoga/subscription';
import { buildSchema, type ContainerType } from 'type-graphql';
import type { ChannelRegistry } from '../../../server/channels/channel-registry';
import type { ChannelState, ChannelStatus, ChannelTransport, InboundMessage, InboundSink, OutboundChunk } from '../../../server/channels/channel.types';
import type { InboundContext } from '../../../server/channels/inbound-pipeline';
import { ChannelOverview } from '../../../server/channels/policies/channel-overview';
import { AppError } from '../../../server/common/errors';
import type { App } from '../../../server/app';
import { authChecker } from '../../../server/graphql/auth-checker';
import { createContextFactory } from '../../../server/graphql/context-factory';
import type { GraphQLContext } from '../../../server/graphql/context';
import { AdminResolver } from '../../../server/graphql/resolvers/admin.resolver';
import { ChannelResolver } from '../../../server/graphql/resolvers/channel.resolver';
import { PairingResolver } from '../../../server/graphql/resolvers/pairing.resolver';
import { PairingService } from '../../../server/modules/pairing';

/**
 * A chat platform in memory: records what the outbound worker sends, feeds inbound messages to the
 * sink it was started with, and reports status changes like a real adapter (through `onStatus`).
 */
export class FakeTransport implements ChannelTransport {
  readonly maxMessageLength = 4096;
  readonly sent: OutboundChunk[] = [];
  starts = 0;
  stops = 0;
  private sink: InboundSink | null = null;
  private current: ChannelStatus;

  constructor(
    readonly channel: string,
    private readonly onStatus: (status: ChannelStatus) => void = () => undefined,
  ) {
    this.current = { channel, state: 'STOPPED', lastError: null, qr: null, updatedAt: new Date() };
  }

  async start(sink: InboundSink): Promise<void> {
    this.sink = sink;
    this.starts += 1;
    this.current = { channel: this.channel, state: 'POLLING', lastError: null, qr: null, updatedAt: new Date() };
  }

  async stop(): Promise<void> {
    this.sink = null;
    this.stops += 1;
    this.current = { channel: this.channel, state: 'STOPPED', lastError: null, qr: null, updatedAt: new Date() };
  }

  async send(chunk: OutboundChunk): Promise<{ platformMessageId?: string }> {
    this.sent.push(chunk);
    return { platformMessageId: String(this.sent.length) };
  }

  status(): ChannelStatus {
    return this.current;
  }

  /** Changes the state as an adapter would (e.g. NEEDS_LINK with a QR) and reports it. */
  report(state: ChannelState, extra: { lastError?: string | null; qr?: string | null } = {}): void {
    this.current = { channel: this.channel, state, lastError: extra.lastError ?? null, qr: extra.qr ?? null, updatedAt: new Date() };
    this.onStatus(this.current);
  }

  get running(): boolean {
    return this.sink !== null;
  }

  /** Delivers a message from "the platform"; throws when the transport is not started. */
  async receive(message: InboundMessage): Promise<void> {
    if (!this.sink) throw new Error(`${this.channel} transport is not started`);
    await this.sink(message);
  }

  /** Texts sent to one chat, in order. */
  textsTo(chatId: string): string[] {
    return this.sent.filter((c) => c.chatId === chatId).map((c) => c.text);
  }
}

let messageSeq = 0;

/** An inbound message with a unique platform id (so dedupe and reply keys never collide). */
export function inbound(channel: string, handle: string, text: string, extra: Partial<InboundMessage> = {}): InboundMessage {
  messageSeq += 1;
  return {
    channel,
    chatId: handle,
    chatKind: 'dm',
    sender: { handle, displayName: `Person ${handle}` },
    text,
    platformMessageId: `m${Date.now()}-${messageSeq}`,
    ...extra,
  };
}

/** A group message from `handle` in `chatId` (mentioning the bot unless told otherwise). */
export function groupMessage(channel: string, chatId: string, handle: string, text: string, mentionsBot = true): InboundMessage {
  return inbound(channel, handle, text, { chatId, chatKind: 'group', mentionsBot });
}

/**
 * Hands a marker notice to a chat and waits until the transport sent it; returns the texts the chat got
 * before it. A chat's mailbox is served in order, so an answer handed over earlier has arrived by then.
 */
export async function fence(app: App, transport: FakeTransport, chatId: string): Promise<string[]> {
  const marker = `fence ${randomUUID()}`;
  await app.chat!.delivery.notify(app.systemCtx('fence'), { channel: transport.channel, chatId, key: `fence:${marker}` }, marker);
  await until(() => transport.textsTo(chatId).includes(marker), `the fence in ${transport.channel}:${chatId}`);
  const texts = transport.textsTo(chatId);
  return texts.slice(0, texts.indexOf(marker));
}

/** Registers a fake transport for `channel` and starts it with the app's inbound pipeline. */
export async function startFakeTransport(app: App, channel: string): Promise<FakeTransport> {
  const registry = app.chat!.channels;
  const transport = new FakeTransport(channel, (s) => registry.emitStatus(s));
  registry.register(transport);
  await registry.start(channel, sinkOf(app));
  return transport;
}

/** The sink `ChatRuntime.startWorkers` gives transports: the inbound pipeline. */
export function sinkOf(app: App): InboundSink {
  return (message) => app.chat!.pipeline.handle(message).then(() => undefined);
}

/** Runs one message through the pipeline and returns what happened (replies, dropped, ticket). */
export function handle(app: App, message: InboundMessage): Promise<InboundContext> {
  return app.chat!.pipeline.handle(message);
}

/** The result of one operation, with the AppError code of its first error. */
export interface ExecResult {
  data: Record<string, unknown> | null | undefined;
  code: string | undefined;
  message: string | undefined;
}

/**
 * The pairing and channel resolvers (plus AdminResolver for setPluginSetting) on their own schema, with
 * the real token authentication of the app (the lead registers them in build-schema.ts and app.ts).
 */
export class PairingGraphQL {
  private constructor(
    readonly schema: GraphQLSchema,
    private readonly contextFor: (authorization: string | undefined) => Promise<GraphQLContext>,
  ) {}

  static async create(app: App, registry: ChannelRegistry | null = app.chat?.channels ?? null): Promise<PairingGraphQL> {
    const s = app.services;
    const overview = registry ? new ChannelOverview({ registry, settings: s.plugins }) : null;
    const instances = new Map<Function, object>([
      [PairingResolver, new PairingResolver(new PairingService(app.db, s.audit, s.users, app.chat?.delivery ?? null))],
      [AdminResolver, new AdminResolver(s.plugins, s.audit, app.config.graphql.max_page_size)],
    ]);
    if (overview) instances.set(ChannelResolver, new ChannelResolver(overview));
    const schema = await buildSchema({
      resolvers: [PairingResolver, ChannelResolver, AdminResolver],
      container: { get: (cls: Function) => instances.get(cls) } as unknown as ContainerType,
      authChecker,
      authMode: 'error',
      validate: { forbidUnknownValues: false },
      // As in build-schema.ts: channelStatus has its own `subscribe`, but type-graphql requires a PubSub.
      pubSub: createPubSub(),
    });
    const contextFor = createContextFactory({
      tokens: s.tokens,
      users: s.users,
      logger: app.logger,
      streams: {
        sessionEvents: () => Promise.reject(new Error('not used')),
        ...(overview ? { channelStatus: (ctx) => overview.watch(ctx) } : {}),
      },
    });
    return new PairingGraphQL(schema, contextFor);
  }

  async exec(token: string | null, source: string, variableValues?: Record<string, unknown>): Promise<ExecResult> {
    const contextValue = await this.contextFor(token ? `Bearer ${token}` : undefined);
    const result = await graphql({ schema: this.schema, source, variableValues, contextValue });
    return resultOf(result);
  }

  /** Starts a subscription; `error` is set when it was refused. */
  async subscribe(token: string | null, source: string): Promise<{ events: AsyncIterator<ExecutionResult> | null; error: ExecResult | null }> {
    const contextValue = await this.contextFor(token ? `Bearer ${token}` : undefined);
    const result = await subscribe({ schema: this.schema, document: parse(source), contextValue });
    if (Symbol.asyncIterator in result) return { events: result as AsyncIterableIterator<ExecutionResult>, error: null };
    return { events: null, error: resultOf(result as ExecutionResult) };
  }
}

function resultOf(result: ExecutionResult): ExecResult {
  const error = result.errors?.[0];
  const original = error?.originalError;
  return {
    data: result.data as Record<string, unknown> | null | undefined,
    code: original instanceof AppError ? original.code : (error?.extensions?.code as string | undefined),
    message: error?.message,
  };
}

/** Polls until `check` returns a truthy value (or fails after `timeoutMs`). */
export async function until<T>(check: () => T | undefined | null | false | Promise<T | undefined | null | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
