import type { Ctx } from '../../common/ctx';
import type { Message } from '../sessions';
import type { Session } from '../sessions';
import type { ToolCall, ToolChoice, ToolSpec } from '../models';
import type { ToolContext } from '../tools';

/** Where and for whom a tool runs (the tool layer's ToolContext). */
export type AgentToolContext = ToolContext;

export interface AgentToolOutcome {
  id: string;
  name: string;
  ok: boolean;
  output: string;
  status: string;
  durationMs: number;
}

/** Port: the tools a sender may use, and the pipeline that runs calls (trust re-checked there). */
export interface AgentTools {
  specsFor(ctx: Ctx, channel: string): Promise<ToolSpec[]>;
  runAll(
    tc: AgentToolContext,
    calls: ToolCall[],
    hooks?: { onStart?(call: ToolCall): void; onEnd?(outcome: AgentToolOutcome): void },
  ): Promise<AgentToolOutcome[]>;
}

export interface RecalledMemory {
  content: string;
  type: string;
  /** Where a document passage comes from (`name, p. 3`); absent for memories. */
  source?: string;
}

/** Port: memories the sender may see, relevant to the turn (issue: memory). */
export interface MemoryRecall {
  recall(ctx: Ctx, session: Session, query: string): Promise<RecalledMemory[]>;
}

export interface SkillText {
  name: string;
  description: string;
  body: string;
}

/** Port: skills injected for the sender on this channel (and what `/skill` asked for in this session). */
export interface SkillSource {
  skillsFor(ctx: Ctx, channel: string, sessionId?: string): Promise<SkillText[]>;
}

export interface OutboundRequest {
  sessionId: string;
  channel: string;
  chatId: string;
  messageId: string;
  text: string;
  /** The turn the reply answers: channels that streamed it live replace the live message. */
  turnId?: string;
}

/** Port: delivers a stored reply to its channel (split, rate-limited, idempotent per chunk). */
export interface OutboundSender {
  deliver(ctx: Ctx, req: OutboundRequest): Promise<void>;
}

/** Port: told after every finished exchange (the summarizer listens). */
export interface ExchangeListener {
  afterExchange(ctx: Ctx, session: Session, exchange: { userMessageIds: string[]; replyMessageId: string }): Promise<void>;
}

/** Port: shows "typing…" in the chat while a turn runs (platform channels). */
export interface ChatPresence {
  setTyping(channel: string, chatId: string, on: boolean): Promise<void>;
}

/**
 * Port: the compaction safety valve (DESIGN §5). Each method returns true when it compacted the session
 * and moved the turn's messages to the new session, where they are answered again; the turn then ends.
 * False lets the turn go on (or fail) as it would without the valve.
 */
export interface TurnCompactor {
  /** Before the first model call, with the estimated tokens of the whole (untrimmed) prompt. */
  beforeTurn(ctx: Ctx, session: Session, batch: Message[], prompt: { estimatedTokens: number; contextWindow: number }): Promise<boolean>;
  /** The provider said the prompt does not fit its context window (compact and retry once). */
  afterContextLengthError(ctx: Ctx, session: Session, batch: Message[], turnId: string): Promise<boolean>;
}

/**
 * What an API client asked for beyond its messages (the OpenAI-compatible API): its own system text, the
 * tools it runs itself, `tool_choice` and `max_tokens`. None of it changes the sender's trust.
 */
export interface ClientTurnRequest {
  /** The client's system text (and a model alias's instructions): added after Muninn's own rules. */
  instructions?: string | null;
  /** Tools the client runs itself: the model's calls to them end the turn and go back to the client. */
  tools?: ToolSpec[];
  toolChoice?: ToolChoice | null;
  maxTokens?: number | null;
}

/** Port: the client request that came with a turn's messages, or null (every channel but the API). */
export interface ClientRequests {
  forTurn(session: Session, batch: Message[]): Promise<ClientTurnRequest | null>;
}

export const NO_CLIENT_REQUESTS: ClientRequests = { forTurn: async () => null };
export const NO_MEMORIES: MemoryRecall = { recall: async () => [] };
export const NO_SKILLS: SkillSource = { skillsFor: async () => [] };
export const NO_EXCHANGE_LISTENER: ExchangeListener = { afterExchange: async () => undefined };
export const NO_COMPACTOR: TurnCompactor = { beforeTurn: async () => false, afterContextLengthError: async () => false };
