import { randomUUID } from 'node:crypto';
import { In } from 'typeorm';
import { Ctx } from '../../common/ctx';
import { BudgetExceededError } from '../../common/errors';
import { newId } from '../../common/ids';
import type { Logger } from '../../common/logger';
import { TrustLevel } from '../../common/trust';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../../modules/audit';
import type { ClientTurnRequest } from '../../modules/agent';
import type { InboundImage } from '../../modules/conversation';
import type { SessionEvent } from '../../modules/events';
import type { ToolCall } from '../../modules/models';
import { ChatKind, Message, MessageRole, MessageStatus, Session, SessionStatus, type SessionLifecycleService } from '../../modules/sessions';
import type { User } from '../../modules/users';
import type { InboundPipeline } from '../inbound-pipeline';
import type { ImageFetcher } from './image-fetcher';
import { OpenAIError } from './openai-errors';
import type { ApiMessage, ChatCompletionRequest } from './openai-request';

/** The channel name of the OpenAI-compatible API (sessions `api:<userId>:<key>`). */
export const API_CHANNEL = 'api';

/** The default agent's model id. */
export const DEFAULT_MODEL = 'muninn';

/** What an `X-Muninn-Session` key may be. */
export const SESSION_KEY_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;

/** The user message that continues a turn after the client ran its tools (their results come before it). */
export const TOOL_RESULTS_NOTE = '(The results of the tool calls above are in; continue.)';

/** The `id` of a completion and its chunks. */
export function completionId(requestId: string): string {
  return `chatcmpl-${requestId.replace(/-/g, '')}`;
}

/** A stateless request's session: `~` never occurs in a client's session key, so the two never meet. */
export function isStatelessApiSession(session: Pick<Session, 'key'>): boolean {
  return session.key.startsWith(`${API_CHANNEL}:`) && session.key.includes(':~');
}

export interface ApiModel {
  id: string;
  description: string;
  instructions: string;
}

/** Ports the channel needs from the event stream and the turn control. */
export interface ApiChannelDeps {
  db: Db;
  pipeline: InboundPipeline;
  lifecycle: SessionLifecycleService;
  events: {
    subscribe(sessionId: string, afterSeq: number, signal?: AbortSignal): AsyncIterableIterator<SessionEvent>;
    lastSeq(sessionId: string): Promise<number>;
  };
  turns: { requestAbort(sessionId: string, reason: string): Promise<boolean> };
  requests: { put(requestId: string, request: ClientTurnRequest): Promise<void> };
  /** Names of every server tool (a client tool of the same name is refused). */
  serverToolNames: () => string[];
  images: ImageFetcher;
  audit: AuditService;
  logger: Logger;
  /** Agent aliases besides `muninn` (`channels.api.models`). */
  aliases: () => Record<string, { description: string; instructions: string }>;
  /** Throws BudgetExceededError when the user's budget is spent and calls over it are refused. @default none */
  budget?: (ctx: Ctx, userId: string) => Promise<void>;
  /** Now, for `Retry-After` of a spent budget. @default the system clock */
  now?: () => Date;
}

/** Who calls: the token's user as it is now, and the token. */
export interface ApiCaller {
  user: User;
  tokenId: string;
}

export interface CompletionOutcome {
  id: string;
  created: number;
  model: string;
  text: string;
  toolCalls: ToolCall[];
  finishReason: 'stop' | 'tool_calls';
  usage: { promptTokens: number; completionTokens: number };
}

/**
 * The OpenAI-compatible API as a channel (DESIGN §10): a request becomes an `InboundMessage` of channel
 * `api` in the inbound pipeline, as the token's user, and its turn runs like any other (trust, memories,
 * skills, server tools, approvals); the reply is read from the session's event stream as it is written.
 * Stateless requests get a session of their own, seeded with the request's earlier messages and archived
 * afterwards; with a client session key the exchange continues session `api:<userId>:<key>`.
 */
export class ApiChannel {
  constructor(private readonly deps: ApiChannelDeps) {}

  models(): ApiModel[] {
    const aliases = Object.entries(this.deps.aliases()).map(([id, a]) => ({ id, description: a.description, instructions: a.instructions }));
    return [{ id: DEFAULT_MODEL, description: 'Muninn, the default agent', instructions: '' }, ...aliases.filter((a) => a.id !== DEFAULT_MODEL)];
  }

  model(id: string): ApiModel {
    const found = this.models().find((m) => m.id === id);
    if (!found) throw OpenAIError.modelNotFound(id);
    return found;
  }

  /** Checks what can be checked before anything is stored: model, client tool names, session key. */
  check(request: ChatCompletionRequest, sessionKey: string | null): ApiModel {
    const model = this.model(request.model);
    if (sessionKey !== null && !SESSION_KEY_PATTERN.test(sessionKey)) {
      throw OpenAIError.invalid('X-Muninn-Session must be 1–100 letters, digits, dots, underscores or dashes.', 'X-Muninn-Session', 'invalid_session_key');
    }
    if (request.tools.length) {
      const server = new Set(this.deps.serverToolNames());
      const clash = request.tools.findIndex((t) => server.has(t.name));
      if (clash >= 0) {
        throw OpenAIError.invalid(`tools[${clash}].function.name ${request.tools[clash]!.name} is the name of one of Muninn's own tools; rename the client tool.`, `tools[${clash}].function.name`, 'tool_name_conflict');
      }
    }
    return model;
  }

  /**
   * Runs one completion: deltas go to `onDelta` as the model writes them. An aborted `signal` (the client
   * went away) stops the turn as `stopTurn` does, or cancels its message when it has not started yet.
   */
  async complete(
    caller: ApiCaller,
    request: ChatCompletionRequest,
    sessionKey: string | null,
    onDelta: (text: string) => void,
    signal: AbortSignal,
    requestId: string = randomUUID(),
  ): Promise<CompletionOutcome> {
    const model = this.check(request, sessionKey);
    const { user } = caller;
    if (user.trust === TrustLevel.BLOCKED) throw OpenAIError.forbidden('This user is blocked.');
    const ctx = new Ctx({
      actor: { kind: 'user', userId: user.id, trust: user.trust, tokenId: caller.tokenId },
      logger: this.deps.logger.child({ userId: user.id }),
      channel: API_CHANNEL,
    });
    const created = Math.floor(Date.now() / 1000);
    const stateful = sessionKey !== null;
    const key = `${API_CHANNEL}:${user.id}:${stateful ? sessionKey : `~${requestId}`}`;

    const conversation = request.messages.filter((m) => m.role !== 'system');
    const instructions = [model.instructions, ...request.messages.filter((m) => m.role === 'system').map((m) => m.text)].filter((t) => t.trim()).join('\n\n');
    let tailStart = conversation.length - 1;
    if (conversation[tailStart]!.role === 'tool') while (tailStart > 0 && conversation[tailStart - 1]!.role === 'tool') tailStart--;
    const tail = conversation.slice(tailStart);
    const last = tail[tail.length - 1]!;
    if (last.role === 'user' && !last.text.trim() && !last.images.length) {
      throw OpenAIError.invalid('The last user message has no text and no image.', `messages[${request.messages.length - 1}].content`);
    }
    // Slash commands need no model, so they work over budget; anything else is refused before it is stored.
    if (!(last.role === 'user' && last.text.trim().startsWith('/'))) await this.checkBudget(ctx, user.id);
    const images = last.role === 'user' ? await this.loadImages(last, signal) : [];

    const session = await this.deps.lifecycle.resolveActive(ctx, { key, userId: user.id, channel: API_CHANNEL, chatId: key, chatKind: ChatKind.DM });
    const seeded = [...(stateful ? [] : conversation.slice(0, tailStart)), ...(last.role === 'tool' ? tail : [])];
    if (seeded.length) await this.seed(ctx, session, seeded);
    await this.deps.requests.put(requestId, {
      instructions: instructions || null,
      tools: request.tools,
      toolChoice: request.toolChoice,
      maxTokens: request.maxTokens,
    });
    const fromSeq = stateful ? await this.deps.events.lastSeq(session.id) : 0;
    const result = await this.deps.pipeline.handle(
      {
        channel: API_CHANNEL,
        chatId: key,
        sessionKey: key,
        chatKind: 'dm',
        sender: { handle: user.id, displayName: user.displayName },
        text: last.role === 'user' ? last.text : TOOL_RESULTS_NOTE,
        images,
        platformMessageId: requestId,
      },
      { user, session },
    );
    if (result.unavailable) throw OpenAIError.unavailable(result.unavailable.message);
    const base = { id: completionId(requestId), created, model: model.id };
    if (!result.ticket) {
      // A slash command answered at once, or the pipeline refused the message.
      if (result.replies.length && result.session) {
        const text = result.replies.join('\n\n');
        onDelta(text);
        return { ...base, text, toolCalls: [], finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } };
      }
      throw OpenAIError.forbidden(result.replies[0] ?? `The message was not accepted (${result.dropped ?? 'refused'}).`);
    }
    const ticket = result.ticket;
    // A session the pipeline rotated (daily reset, idle expiry) starts its own event sequence.
    const outcome = await this.follow(ctx, ticket.sessionId, ticket.sessionId === session.id ? fromSeq : 0, ticket.messageId, onDelta, signal);
    this.after(ctx, caller, session, request, outcome, stateful);
    // Stopped from elsewhere (`/stop`, `stopTurn` in the console): what was written so far.
    if (outcome.status === 'cancelled' || outcome.status === 'gone') {
      return { ...base, text: outcome.streamed, toolCalls: [], finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } };
    }
    if (!outcome.reply) throw OpenAIError.unavailable('The turn ended without a reply.');
    if (outcome.reply.status === MessageStatus.FAILED) {
      // Admitted above, then refused at the model call (other requests of the user spent the rest meanwhile).
      if (outcome.errorCode === 'BUDGET_EXCEEDED') throw OpenAIError.budgetExceeded(outcome.reply.content, null);
      throw OpenAIError.upstream(outcome.reply.content);
    }
    const toolCalls = Array.isArray(outcome.reply.toolCalls) ? (outcome.reply.toolCalls as ToolCall[]) : [];
    return {
      ...base,
      text: outcome.reply.content,
      toolCalls,
      finishReason: toolCalls.length ? 'tool_calls' : 'stop',
      usage: { promptTokens: outcome.reply.inputTokens, completionTokens: outcome.reply.outputTokens },
    };
  }

  private async checkBudget(ctx: Ctx, userId: string): Promise<void> {
    try {
      await this.deps.budget?.(ctx, userId);
    } catch (err) {
      if (!(err instanceof BudgetExceededError)) throw err;
      const now = (this.deps.now ?? (() => new Date()))();
      throw OpenAIError.budgetExceeded(err.message, Math.max(1, Math.ceil((err.resetsAt.getTime() - now.getTime()) / 1000)));
    }
  }

  private async loadImages(message: ApiMessage, signal: AbortSignal): Promise<InboundImage[]> {
    return Promise.all(
      message.images.map((ref) => (ref.kind === 'data' ? { mimeType: ref.mimeType, dataBase64: ref.dataBase64 } : this.deps.images.fetch(ref.url, ref.param, signal))),
    );
  }

  /** Stores earlier messages of the request (stateless) and the client's tool results as answered history. */
  private async seed(ctx: Ctx, session: Session, messages: ApiMessage[]): Promise<void> {
    const { db } = this.deps;
    await db.withTransaction(ctx, async (tx) => {
      const repo = db.repo(tx, Message);
      const rows = messages.map((m) =>
        repo.create({
          id: newId(),
          sessionId: session.id,
          userId: m.role === 'user' ? ctx.userId : null,
          role: m.role === 'user' ? MessageRole.USER : m.role === 'assistant' ? MessageRole.ASSISTANT : MessageRole.TOOL,
          content: m.images.length ? `${m.text}\n[${m.images.length} image(s) sent earlier]`.trim() : m.text,
          status: MessageStatus.DONE,
          dedupeKey: null,
          replyToId: null,
          turnId: null,
          toolCalls: m.toolCalls?.length ? m.toolCalls : null,
          toolCallId: m.toolCallId ?? null,
        }),
      );
      await repo.save(rows, { reload: false });
      await this.deps.lifecycle.recordActivity(tx, session.id, { messages: rows.length });
    });
  }

  /** Follows the session's events until the turn answering `messageId` finished (or the client left). */
  private async follow(
    ctx: Ctx,
    firstSessionId: string,
    fromSeq: number,
    messageId: string,
    onDelta: (text: string) => void,
    signal: AbortSignal,
  ): Promise<{ status: 'done' | 'failed' | 'cancelled' | 'gone'; reply: Message | null; streamed: string; errorCode?: string | null }> {
    let sessionId = firstSessionId;
    let afterSeq = fromSeq;
    let turnId: string | null = null;
    let streamed = '';
    const onAbort = () => void this.stop(ctx, sessionId, messageId);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (signal.aborted) return { status: 'gone', reply: null, streamed };
        let moved: string | null = null;
        for await (const e of this.deps.events.subscribe(sessionId, afterSeq, signal)) {
          if (e.type === 'TurnStarted' && e.messageIds.includes(messageId)) turnId = e.turnId;
          else if (e.type === 'ReplyDelta' && e.turnId === turnId) {
            streamed += e.text;
            onDelta(e.text);
          } else if (e.type === 'SessionRotated' && e.previousSessionId === sessionId) {
            // A compaction moved the waiting message to the session's successor: it is answered there.
            moved = e.newSessionId;
            break;
          } else if (e.type === 'TurnFinished' && e.turnId === turnId) {
            if (e.status === 'cancelled' && !e.replyMessageId && e.error) {
              turnId = null;
              continue;
            }
            const reply = e.replyMessageId ? await this.deps.db.repo(ctx, Message).findOneBy({ id: e.replyMessageId }) : null;
            return { status: e.status, reply, streamed, errorCode: e.errorCode ?? null };
          }
        }
        if (!moved) return { status: 'gone', reply: null, streamed };
        sessionId = moved;
        afterSeq = 0;
        turnId = null;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** The client went away: its message is cancelled if still waiting, its running turn stopped. */
  private async stop(ctx: Ctx, sessionId: string, messageId: string): Promise<void> {
    try {
      await this.deps.db.repo(ctx, Message).update({ id: messageId, status: In([MessageStatus.QUEUED]) }, { status: MessageStatus.CANCELLED });
      await this.deps.turns.requestAbort(sessionId, 'the API client disconnected');
    } catch (err) {
      ctx.logger.warn({ err, sessionId }, 'could not stop the turn of a disconnected API client');
    }
  }

  /** After the exchange: the audit entry (user, token, tokens used); a stateless request's session is archived. */
  private after(
    ctx: Ctx,
    caller: ApiCaller,
    session: Session,
    request: ChatCompletionRequest,
    outcome: { status: string; reply: Message | null },
    stateful: boolean,
  ): void {
    const work = async () => {
      if (!stateful) {
        await this.deps.db
          .repo(ctx, Session)
          .update({ id: session.id, status: SessionStatus.ACTIVE }, { status: SessionStatus.ARCHIVED, endedAt: new Date(), updatedAt: new Date() });
      }
      await this.deps.audit.record(ctx, 'api.chat_completion', { type: 'Session', id: session.id }, {
        tokenId: caller.tokenId,
        model: request.model,
        stream: request.stream,
        stateful,
        status: outcome.status,
        inputTokens: outcome.reply?.inputTokens ?? 0,
        outputTokens: outcome.reply?.outputTokens ?? 0,
      });
    };
    work().catch((err: unknown) => ctx.logger.warn({ err, sessionId: session.id }, 'could not record an API exchange'));
  }
}

