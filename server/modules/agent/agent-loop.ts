import { In } from 'typeorm';
import { Ctx } from '../../common/ctx';
import { AppError } from '../../common/errors';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { Db } from '../../persistence/db';
import type { TurnExecutor } from '../conversation';
import { TurnAbortedError } from '../conversation';
import type { SessionEventBody, SessionEventPublisher } from '../events';
import type { ChatMessage, ChatResult, ToolCall } from '../models';
import { ContextLengthError, ModelError } from '../models';
import { Message } from '../sessions';
import type { Session } from '../sessions';
import type { SessionLifecycleService } from '../sessions';
import { ChatKind, MessageRole, MessageStatus } from '../sessions';
import type { TokenCounts, UsageService } from '../usage';
import type { User, UserService } from '../users';
import {
  NO_CLIENT_REQUESTS,
  NO_COMPACTOR,
  type AgentToolOutcome,
  type AgentTools,
  type ChatPresence,
  type ClientRequests,
  type ExchangeListener,
  type MemoryRecall,
  type OutboundSender,
  type SkillSource,
  type TurnCompactor,
} from './agent.ports';
import { loadHistory } from './history';
import type { CallPriority, ModelCaller, ModelRole } from '../models';
import { buildPrompt } from './prompt-builder';
import { parseTextToolCalls } from './tool-call-parser';
import { describeModelFailure } from './model-failure';

export interface AgentLoopOptions {
  systemPrompt: string;
  maxIterations: number;
  historyMessages: number;
  estimate: (messages: ChatMessage[]) => number;
}

export interface AgentLoopDeps {
  db: Db;
  users: UserService;
  lifecycle: SessionLifecycleService;
  events: SessionEventPublisher;
  models: ModelCaller;
  tools: AgentTools;
  memory: MemoryRecall;
  skills: SkillSource;
  outbound: OutboundSender;
  usage: UsageService;
  exchange: ExchangeListener;
  presence: ChatPresence;
  /** The compaction safety valve. @default none */
  compactor?: TurnCompactor;
  /** What API clients asked for with their messages (system text, client tools). @default none */
  clientRequests?: ClientRequests;
}

/**
 * How a turn runs. Conversation turns use {@link CONVERSATION_TURN}; a beat's task runs as a heartbeat
 * turn: its own model role and priority, no earlier messages, some tools withheld, no summary.
 */
export interface TurnProfile {
  role: ModelRole;
  priority: CallPriority;
  /** Include earlier messages of the session in the prompt. */
  history: boolean;
  /** Tools neither shown nor run in this turn (a call to one is answered as refused). */
  withheldTools: ReadonlySet<string>;
  /** Hand the finished exchange to the exchange listener (the summarizer). */
  summarize: boolean;
}

export const CONVERSATION_TURN: TurnProfile = {
  role: 'main',
  priority: 'interactive',
  history: true,
  withheldTools: new Set(),
  summarize: true,
};

/** The turn's messages were moved to a new session by a compaction and are answered there. */
class TurnMovedError extends Error {}

const ZERO: TokenCounts = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  estimated: false,
};

function addUsage(a: TokenCounts, b: TokenCounts): TokenCounts {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    estimated: a.estimated || b.estimated,
  };
}

/**
 * One turn of the agent (DESIGN §2.4): build the prompt for what the sender may use and see, call the
 * model, run tool calls through the tool pipeline, repeat up to the iteration cap, then store and
 * deliver the reply. Aborts (`/stop`, interrupt) and model failures end the turn with a notice; the
 * session's next message works either way.
 */
export class AgentLoop implements TurnExecutor {
  constructor(
    private readonly deps: AgentLoopDeps,
    private readonly options: AgentLoopOptions,
  ) {}

  async runTurn(
    jobCtx: Ctx,
    session: Session,
    batch: Message[],
    turnId: string,
    signal: AbortSignal,
    profile: TurnProfile = CONVERSATION_TURN,
  ): Promise<void> {
    const { events } = this.deps;
    const last = batch[batch.length - 1]!;
    const sender = last.userId ? await this.deps.users.current(jobCtx, last.userId) : null;
    const ctx = this.senderCtx(jobCtx, sender, session);
    // Events of a session leave in the order they are published, so the prompt is built while this one is
    // on its way; the reply waits for it (a failed publish fails the turn).
    const started = events.publish(session.id, {
      type: 'TurnStarted',
      turnId,
      messageIds: batch.map((m) => m.id),
    });
    started.catch(() => undefined);
    const typing = (on: boolean) =>
      session.chatId
        ? this.deps.presence.setTyping(session.channel, session.chatId, on).catch(() => undefined)
        : Promise.resolve();
    // "typing…" goes out while the prompt is built; the reply waits for it, so it never comes after the reply.
    const typingShown = typing(true);
    let usage: TokenCounts = { ...ZERO };
    try {
      const {
        text,
        usage: used,
        clientToolCalls,
      } = await this.think(ctx, session, batch, turnId, signal, sender, profile);
      usage = used;
      await started;
      await typingShown;
      const reply = await this.finish(
        ctx,
        session,
        batch,
        turnId,
        text,
        usage,
        MessageStatus.DONE,
        (r) => ({ type: 'TurnFinished', turnId, status: 'done', replyMessageId: r.id }),
        clientToolCalls,
      );
      if (profile.summarize)
        await this.deps.exchange.afterExchange(ctx, session, {
          userMessageIds: batch.map((m) => m.id),
          replyMessageId: reply.id,
        });
    } catch (err) {
      await typingShown;
      // The turn's start never reached its subscribers (Redis is gone): it fails as a whole, as when its
      // start was published first, and its messages stay to be answered again.
      if (await started.then(() => false, () => true)) throw err;
      if (signal.aborted || err instanceof TurnAbortedError) {
        const reason = signal.reason instanceof TurnAbortedError ? signal.reason.reason : 'stopped';
        // On shutdown the turn stays PROCESSING and is answered again after the restart.
        if (reason === TurnAbortedError.SHUTDOWN) throw err;
        await this.deps.db
          .repo(jobCtx, Message)
          .update({ id: In(batch.map((m) => m.id)) }, { status: MessageStatus.CANCELLED });
        await events.publish(session.id, {
          type: 'Notice',
          level: 'info',
          text: `Turn stopped (${reason}).`,
        });
        await events.publish(session.id, {
          type: 'TurnFinished',
          turnId,
          status: 'cancelled',
          replyMessageId: null,
        });
        return;
      }
      const compactor = this.deps.compactor ?? NO_COMPACTOR;
      if (
        err instanceof TurnMovedError ||
        (err instanceof ContextLengthError &&
          (await compactor.afterContextLengthError(ctx, session, batch, turnId)))
      ) {
        await events.publish(session.id, {
          type: 'TurnFinished',
          turnId,
          status: 'cancelled',
          replyMessageId: null,
          error: 'continued in a new session after compaction',
        });
        return;
      }
      const problem = describeModelFailure(err);
      // A provider's failure is expected (and was logged per attempt): its message says it all, a stack
      // would only point into our queue code. Anything else is a defect and keeps its stack.
      const logged =
        err instanceof ModelError || err instanceof AppError
          ? { error: err.message, kind: err.name }
          : { err };
      ctx.logger.warn({ ...logged, sessionId: session.id, turnId }, 'turn failed');
      const errorCode = err instanceof AppError ? err.code : null;
      await this.finish(ctx, session, batch, turnId, problem, usage, MessageStatus.FAILED, (r) => ({
        type: 'TurnFinished',
        turnId,
        status: 'failed',
        replyMessageId: r.id,
        error: problem,
        ...(errorCode ? { errorCode } : {}),
      }));
    } finally {
      await typing(false);
    }
  }

  /** The sender acting, with their own trust (each group member's own trust gates tools). */
  private senderCtx(jobCtx: Ctx, sender: User | null, session: Session): Ctx {
    if (!sender)
      return new Ctx({
        actor: { kind: 'anonymous' },
        logger: jobCtx.logger,
        channel: session.channel,
        requestId: jobCtx.requestId,
      });
    return new Ctx({
      actor: { kind: 'user', userId: sender.id, trust: sender.trust },
      logger: jobCtx.logger.child({ userId: sender.id, sessionId: session.id }),
      channel: session.channel,
      requestId: jobCtx.requestId,
    });
  }

  private async think(
    ctx: Ctx,
    session: Session,
    batch: Message[],
    turnId: string,
    signal: AbortSignal,
    sender: User | null,
    profile: TurnProfile,
  ): Promise<{ text: string; usage: TokenCounts; clientToolCalls?: ToolCall[] }> {
    const { models, tools, events, db } = this.deps;
    const info = models.info(profile.role);
    const mayUseTools = !!sender && trustAtLeast(sender.trust, TrustLevel.MEMBER);
    const query = batch.map((m) => m.content).join('\n');
    // Independent look-ups, so their Redis and database round trips overlap.
    const [allSpecs, skills, memories, { summary, messages: history }, client] = await Promise.all([
      mayUseTools ? tools.specsFor(ctx, session.channel) : [],
      mayUseTools ? this.deps.skills.skillsFor(ctx, session.channel, session.id) : [],
      sender ? this.deps.memory.recall(ctx, session, query) : [],
      (session.chatKind === ChatKind.GROUP ? this.senderNames(ctx, batch) : Promise.resolve(undefined)).then(
        (senderNames) =>
          loadHistory(db, ctx, session.id, batch, {
            limit: profile.history ? this.options.historyMessages : batch.length,
            vision: info.supportsVision,
            senderNames,
          }),
      ),
      (this.deps.clientRequests ?? NO_CLIENT_REQUESTS).forTurn(session, batch),
    ]);
    const serverSpecs = allSpecs.filter((s) => !profile.withheldTools.has(s.name));
    // Tools the API client runs itself: offered only to senders who may use tools at all, never in place
    // of a server tool (the API refuses such a name before the turn), and not when the client said `none`.
    const clientTools =
      mayUseTools && client?.tools?.length && client.toolChoice !== 'none'
        ? client.tools.filter((t) => !serverSpecs.some((s) => s.name === t.name))
        : [];
    const clientToolNames = new Set(clientTools.map((t) => t.name));
    const specs = [...serverSpecs, ...clientTools];
    const toolChoice =
      clientTools.length && client?.toolChoice && client.toolChoice !== 'auto'
        ? client.toolChoice
        : undefined;
    // The time changes every turn: it sits late in the prompt, to the minute, so the prefix stays cacheable.
    const turnContext = [`Now: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`];
    const context = [
      `Channel: ${session.channel} (${session.chatKind === ChatKind.GROUP ? `group chat ${session.chatId}` : 'direct chat'})`,
      sender
        ? `You are talking with ${sender.displayName} (trust ${sender.trust}).`
        : 'The sender is not known.',
    ];
    const budget = Math.max(512, info.contextWindow - Math.min(2048, Math.floor(info.contextWindow / 4)));
    const promptFor = (pinnedTail: number, budgetTokens: number, recalled = memories) =>
      buildPrompt({
        systemPrompt: this.options.systemPrompt,
        tools: specs,
        nativeTools: info.supportsTools,
        skills,
        memories: recalled,
        context,
        turnContext,
        summary,
        history,
        clientInstructions: client?.instructions ?? null,
        pinnedTail,
        budgetTokens,
        estimate: this.options.estimate,
      });
    if (this.deps.compactor) {
      // Recalled memories are trimmed before any history, so they never make a session compact.
      const whole = promptFor(batch.length, Number.POSITIVE_INFINITY, []);
      const prompt = { estimatedTokens: whole.estimatedTokens, contextWindow: info.contextWindow };
      if (await this.deps.compactor.beforeTurn(ctx, session, batch, prompt))
        throw new TurnMovedError('compacted before the turn');
    }
    let usage: TokenCounts = { ...ZERO };
    let pinned = batch.length;
    for (let iteration = 0; iteration < this.options.maxIterations; iteration++) {
      if (signal.aborted) throw new TurnAbortedError('stopped');
      const prompt = promptFor(pinned, budget);
      const result = await models.call(
        ctx,
        {
          role: profile.role,
          priority: profile.priority,
          messages: prompt.messages,
          tools: info.supportsTools && specs.length ? specs : undefined,
          ...(client?.maxTokens ? { maxTokens: client.maxTokens } : {}),
          ...(toolChoice && info.supportsTools ? { toolChoice } : {}),
          stream: {
            sessionId: session.id,
            turnId,
            holdToolCallText: !info.supportsTools && specs.length > 0,
          },
        },
        signal,
      );
      usage = addUsage(usage, result.usage);
      await this.recordUsage(ctx, session, result, profile.role);
      const calls = this.toolCallsOf(result, specs.length > 0);
      if (!calls.length) return { text: result.text.trim() || '(no answer)', usage };
      // Calls to the client's tools end the turn: the client runs them and sends the results back. Calls
      // to server tools in the same answer are dropped (the model may ask again once it has the results).
      const clientCalls = calls.filter((c) => clientToolNames.has(c.name));
      if (clientCalls.length) return { text: result.text.trim(), usage, clientToolCalls: clientCalls };
      const assistant = await this.store(ctx, session, turnId, MessageRole.ASSISTANT, result.text, {
        toolCalls: calls,
        replyToId: batch[batch.length - 1]!.id,
      });
      history.push({ role: 'assistant', content: assistant.content, toolCalls: calls });
      const outcomes = await this.runTools(
        { ctx, sessionId: session.id, channel: session.channel, chatId: session.chatId, signal, turnId },
        calls,
        profile,
        {
          onStart: (call) =>
            void events.publish(session.id, {
              type: 'ToolCallEvent',
              turnId,
              callId: call.id,
              tool: call.name,
              phase: 'started',
            }),
          onEnd: (o) =>
            void events.publish(session.id, {
              type: 'ToolCallEvent',
              turnId,
              callId: o.id,
              tool: o.name,
              phase: 'finished',
              outcome: o.status,
              summary: o.output.slice(0, 200),
            }),
        },
      );
      for (const o of outcomes) {
        await this.store(ctx, session, turnId, MessageRole.TOOL, o.output, {
          toolCallId: o.id,
          replyToId: batch[batch.length - 1]!.id,
        });
        history.push({ role: 'tool', content: o.output, toolCallId: o.id, name: o.name });
      }
      pinned += 1 + outcomes.length;
    }
    return {
      text: `I stopped after ${this.options.maxIterations} steps without a final answer. Ask me to continue if you want me to go on.`,
      usage,
    };
  }

  /** Runs the calls through the tool pipeline; withheld tools are answered as refused without running. */
  private async runTools(
    tc: Parameters<AgentTools['runAll']>[0],
    calls: ToolCall[],
    profile: TurnProfile,
    hooks: Parameters<AgentTools['runAll']>[2],
  ): Promise<AgentToolOutcome[]> {
    const allowed = calls.filter((c) => !profile.withheldTools.has(c.name));
    const ran = allowed.length ? await this.deps.tools.runAll(tc, allowed, hooks) : [];
    const byId = new Map(ran.map((o) => [o.id, o]));
    return calls.map(
      (c) =>
        byId.get(c.id) ?? {
          id: c.id,
          name: c.name,
          ok: false,
          status: 'refused',
          durationMs: 0,
          output: `Refused: the tool "${c.name}" is not available in this run.`,
        },
    );
  }

  private toolCallsOf(result: ChatResult, toolsOffered: boolean): ToolCall[] {
    if (result.toolCalls.length) return result.toolCalls;
    if (!toolsOffered) return [];
    return parseTextToolCalls(result.text)?.calls ?? [];
  }

  private async senderNames(ctx: Ctx, batch: Message[]): Promise<Map<string, string>> {
    const ids = [...new Set(batch.map((m) => m.userId).filter((id): id is string => !!id))];
    const users = await this.deps.users.usersByIds(ctx, ids);
    return new Map(users.filter((u): u is User => !!u).map((u) => [u.id, u.displayName]));
  }

  private async recordUsage(ctx: Ctx, session: Session, result: ChatResult, role: ModelRole): Promise<void> {
    await this.deps.usage.record(ctx, {
      userId: ctx.userId,
      sessionId: session.id,
      messageId: null,
      provider: result.provider,
      model: result.model,
      role,
      usage: result.usage,
      costUsd: result.costUsd ?? null,
    });
  }

  private store(
    ctx: Ctx,
    session: Session,
    turnId: string,
    role: MessageRole,
    content: string,
    extra: { toolCalls?: ToolCall[]; toolCallId?: string; replyToId?: string },
  ): Promise<Message> {
    const row = this.deps.db.repo(ctx, Message).create({
      sessionId: session.id,
      userId: null,
      role,
      content,
      status: MessageStatus.DONE,
      turnId,
      toolCalls: extra.toolCalls ?? null,
      toolCallId: extra.toolCallId ?? null,
      replyToId: extra.replyToId ?? null,
      dedupeKey: null,
    });
    return this.deps.db.insert(ctx, Message, row).then(() => row);
  }

  /**
   * Stores the reply and marks the turn's messages answered in one transaction, delivers it, and publishes
   * it together with the turn's end (`finished`; issued in one tick, the two events leave in one batch).
   */
  private async finish(
    ctx: Ctx,
    session: Session,
    batch: Message[],
    turnId: string,
    text: string,
    usage: TokenCounts,
    status: MessageStatus.DONE | MessageStatus.FAILED,
    finished: (reply: Message) => SessionEventBody,
    toolCalls?: ToolCall[],
  ): Promise<Message> {
    const { db, events } = this.deps;
    const reply = await db.withTransaction(ctx, async (tx) => {
      const saved = db.repo(tx, Message).create({
        sessionId: session.id,
        userId: null,
        role: MessageRole.ASSISTANT,
        content: text,
        status,
        turnId,
        replyToId: batch[batch.length - 1]!.id,
        dedupeKey: `reply:${turnId}`,
        toolCalls: toolCalls?.length ? toolCalls : null,
        toolCallId: null,
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        cacheReadTokens: usage.cacheReadTokens,
        cacheWriteTokens: usage.cacheWriteTokens,
        usageEstimated: usage.estimated,
      });
      // Every column with a database default is written above, so there is nothing to read back.
      await db.insert(tx, Message, saved);
      await db.update(tx, Message, { id: batch.map((m) => m.id) }, { status: MessageStatus.DONE });
      await this.deps.lifecycle.recordActivity(tx, session.id, { messages: batch.length + 1, ...usage });
      return saved;
    });
    if (session.chatId) {
      await this.deps.outbound.deliver(ctx, {
        sessionId: session.id,
        channel: session.channel,
        chatId: session.chatId,
        messageId: reply.id,
        text,
        turnId,
      });
    }
    await Promise.all([
      events.publish(session.id, {
        type: 'MessageAdded',
        messageId: reply.id,
        role: reply.role,
        content: reply.content,
      }),
      events.publish(session.id, finished(reply)),
    ]);
    return reply;
  }
}
