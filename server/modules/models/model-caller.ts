import type { Ctx } from '../../common/ctx';
import type { ChatMessage, ChatResult, ToolChoice, ToolSpec } from './model-provider';
import type { ModelRole } from './model-router';

/** Interactive calls (main agent, tool loop) go before heartbeat calls, which go before summarizer calls. */
export type CallPriority = 'interactive' | 'heartbeat' | 'summarizer';

export interface ModelCallInput {
  role: ModelRole;
  priority: CallPriority;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** Most tokens the answer may have (an API client's `max_tokens`; budgets cap it too). @default the provider's */
  maxTokens?: number;
  /** The API client's `tool_choice`. @default the model chooses */
  toolChoice?: ToolChoice;
  /**
   * Whose budget pays for the call: a user id, or null for the server's own work. @default the acting
   * user of `ctx` (the summarizer passes the session's user, beats and webhooks their owner).
   */
  chargeTo?: string | null;
  /** Publish the text as ReplyDelta events of this session and turn while it is written. */
  stream?: {
    sessionId: string;
    turnId: string;
    /** The model may answer with a JSON `tool_calls` block in text: do not stream such an answer. */
    holdToolCallText?: boolean;
  };
}

export interface ModelRouteInfo {
  provider: string;
  model: string;
  contextWindow: number;
  supportsTools: boolean;
  supportsVision: boolean;
  usingMock: boolean;
}

/**
 * Calls a model through the per-provider `model-calls` queue (priorities, concurrency, retries,
 * fallbacks); `ModelCallService` implements it.
 */
export interface ModelCaller {
  call(ctx: Ctx, input: ModelCallInput, signal?: AbortSignal): Promise<ChatResult>;
  info(role: ModelRole): ModelRouteInfo;
}
