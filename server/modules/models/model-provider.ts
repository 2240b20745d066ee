// === The model port
// Everything that talks to a language model goes through `ModelProvider`. Callers (the agent loop, the
// `model-calls` queue, the summarizer, memory indexing) never see SDK types: the OpenAI-compatible adapter
// and the mock provider both map to and from these shapes.

/** Who wrote a message in a chat request. */
export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

/** One piece of multimodal content. Images travel inline as base64 (never as URLs the provider must fetch). */
export type ContentPart = { type: 'text'; text: string } | { type: 'image'; mimeType: string; dataBase64: string };

/** A tool call requested by the model. `arguments` is the raw JSON text the model produced (may be invalid). */
export interface ToolCall {
  id: string;
  name: string;
  /** Raw JSON text; validating it is the tool pipeline's job. */
  arguments: string;
}

/**
 * One message of the conversation shown to the model.
 * - `assistant` messages may carry `toolCalls` (their `content` may then be empty).
 * - `tool` messages answer one call: `toolCallId` is the call's id and `name` the tool's name.
 * - `name` on `user`/`system` messages is a speaker label; providers that restrict it get a sanitized form.
 */
export interface ChatMessage {
  role: ChatRole;
  content: string | ContentPart[];
  toolCalls?: ToolCall[];
  toolCallId?: string;
  name?: string;
}

/** A tool offered to the model (native function calling). */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/**
 * Token usage of one call. `inputTokens` includes cached prompt tokens (as the OpenAI API counts them);
 * `cacheReadTokens` is the cached share. `estimated` is true when the provider reported nothing and the
 * numbers come from the local tokenizer.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  estimated: boolean;
  /** The call's cost in USD as the provider reported it (OpenRouter's `usage.cost`); absent when it sent none. */
  costUsd?: number;
}

/** One chat completion request. `model` is the provider's model id (the router picks it per role). */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  temperature?: number;
  maxTokens?: number;
  /** Which tool the model must call (`required`: any, `{ name }`: that one); absent lets it choose. */
  toolChoice?: ToolChoice;
}

/** OpenAI's `tool_choice`: `auto` (default), `none`, `required` or one named tool. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** Per-call options. */
export interface ChatOptions {
  /** Aborts the call; the promise then rejects with an error named `AbortError` (`ModelAbortError`). */
  signal?: AbortSignal;
  /** Receives text deltas in order while the model writes; their concatenation equals `ChatResult.text`. */
  onDelta?: (text: string) => void;
}

/** The outcome of one chat call. */
export interface ChatResult {
  /** The assistant's text (may be empty when only tool calls were returned). */
  text: string;
  /** Native tool calls, assembled from the stream; empty when none. */
  toolCalls: ToolCall[];
  /** As reported by the provider (`stop`, `length`, `tool_calls`, …); `stop` when it reported none. */
  finishReason: string;
  usage: Usage;
  /** The model that answered (as reported by the provider, else the requested one). */
  model: string;
  /** The provider's name (its key in `ai.providers`, or `mock`). */
  provider: string;
  /**
   * What the call cost in USD: the provider's own figure, else the price table's (`pricing`); null when
   * the model has no price. Set by the model-call service, not by providers.
   */
  costUsd?: number | null;
  /** Reasoning text some servers stream separately (`reasoning_content` / `reasoning`); never part of `text`. */
  reasoning?: string;
}

/** Options of `ModelProvider.embed`. */
export interface EmbedOptions {
  /** Embedding model; defaults to the provider's model. */
  model?: string;
  signal?: AbortSignal;
  /** Told the input tokens the server reported for the call (OpenAI's `usage.prompt_tokens`), when it did. */
  onUsage?: (inputTokens: number) => void;
}

/**
 * A language model service. Implementations never retry on their own (retries and back-off are the
 * `model-calls` queue's job); they throw `ModelApiError`, `ModelTransportError`, `ContextLengthError`,
 * `ModelResponseError` or `ModelAbortError` (see `model.errors.ts` and `classifyModelError`).
 *
 * @example
 * const result = await provider.chat(
 *   { model: 'llama3', messages: [{ role: 'user', content: 'Hi' }] },
 *   { signal, onDelta: (t) => publish(t) },
 * );
 */
export interface ModelProvider {
  /** The key in `config.ai.providers` (or `mock`). */
  readonly name: string;
  /** Context window of the provider's model(s) in tokens. */
  readonly contextWindow: number;
  /** How many calls may run at once against this provider (the queue's worker concurrency). */
  readonly maxConcurrency: number;
  /** Whether native tool calls are supported; otherwise tools are described in the prompt. */
  readonly supportsTools: boolean;
  /** Whether image parts are sent to the model; otherwise they become a short text note. */
  readonly supportsVision: boolean;
  /** One chat completion; streams text through `onDelta` when given. */
  chat(req: ChatRequest, opts?: ChatOptions): Promise<ChatResult>;
  /** One vector per text, in input order. */
  embed(texts: string[], opts?: EmbedOptions): Promise<number[][]>;
  /** Resolves when the provider answers; throws a model error when it is unreachable or rejects us. */
  ping(signal?: AbortSignal): Promise<void>;
  /**
   * Loads now what the first call would load (client code), without calling the provider: for a process
   * that knows a call comes soon (memory search at start-up) and has the time. @default nothing to load
   */
  prepare?(): void;
  /** Releases sockets and timers. */
  dispose?(): Promise<void>;
}
