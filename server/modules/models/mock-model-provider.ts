import { createHash } from 'node:crypto';
import { assertNever } from '../../common/assert-never';
import { ContextLengthError, ModelAbortError, ModelApiError, ModelTransportError } from './model.errors';
import type { ChatMessage, ChatOptions, ChatRequest, ChatResult, EmbedOptions, ModelProvider, ToolCall, Usage } from './model-provider';
import { estimateMessages, estimateTokens, estimateTools } from './token-estimator';
import { contentAsText } from './openai-compatible/wire';

// === Mock model provider
// Used when no provider is configured and no local Ollama answers, and by tests of the agent loop. It is
// deterministic: without a script it answers `Mock reply: <last user message>`, streamed in a few deltas.

/** Errors a script can ask for by name; each becomes the matching model error. */
export type MockErrorKind = 'rate-limit' | 'server' | 'transport' | 'context-length' | 'bad-request';

/** One scripted answer. A function is called with the request and may return any other step. */
export type MockStep =
  | { text: string; delayMs?: number; chunks?: number; finishReason?: string }
  | { toolCalls: Array<{ id?: string; name: string; arguments?: string | Record<string, unknown> }>; text?: string; delayMs?: number }
  | { error: Error | MockErrorKind; retryAfterMs?: number; delayMs?: number }
  | ((req: ChatRequest) => MockStep | Promise<MockStep>);

export interface MockModelProviderOptions {
  /** @default 'mock' */
  name?: string;
  /** Model reported in results. @default 'mock-1' */
  model?: string;
  /** @default 8192 */
  contextWindow?: number;
  /** @default 4 */
  maxConcurrency?: number;
  /** @default true */
  supportsTools?: boolean;
  /** @default true */
  supportsVision?: boolean;
  /** Dimension of `embed` vectors. @default 64 */
  embeddingDimension?: number;
  /** Pause between streamed deltas, so tests can observe streaming. @default 0 */
  chunkDelayMs?: number;
  /** Deltas the default reply is split into. @default 3 */
  chunks?: number;
}

/** The default reply: derived from the last user message. */
export function mockReplyText(messages: readonly ChatMessage[]): string {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const text = lastUser ? contentAsText(lastUser.content).trim() : '';
  return `Mock reply: ${text || '(no user message)'}`;
}

/** Splits text into at most `n` pieces on word boundaries (concatenation gives the text back). */
export function splitIntoChunks(text: string, n: number): string[] {
  if (!text) return [];
  const words = text.match(/\S+\s*|\s+/g) ?? [text];
  const count = Math.max(1, Math.min(n, words.length));
  const per = Math.ceil(words.length / count);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += per) out.push(words.slice(i, i + per).join(''));
  return out;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ModelAbortError());
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new ModelAbortError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Deterministic, scriptable `ModelProvider`.
 *
 * @example
 * const mock = new MockModelProvider();
 * mock.enqueue({ toolCalls: [{ name: 'current_time', arguments: {} }] }, { text: 'It is noon.' });
 */
export class MockModelProvider implements ModelProvider {
  readonly name: string;
  readonly model: string;
  readonly contextWindow: number;
  readonly maxConcurrency: number;
  readonly supportsTools: boolean;
  readonly supportsVision: boolean;
  /** Every chat request, in call order. */
  readonly requests: ChatRequest[] = [];
  private readonly script: MockStep[] = [];
  private readonly dimension: number;
  private readonly chunkDelayMs: number;
  private readonly chunks: number;
  private callCount = 0;

  constructor(options: MockModelProviderOptions = {}) {
    this.name = options.name ?? 'mock';
    this.model = options.model ?? 'mock-1';
    this.contextWindow = options.contextWindow ?? 8192;
    this.maxConcurrency = options.maxConcurrency ?? 4;
    this.supportsTools = options.supportsTools ?? true;
    this.supportsVision = options.supportsVision ?? true;
    this.dimension = options.embeddingDimension ?? 64;
    this.chunkDelayMs = options.chunkDelayMs ?? 0;
    this.chunks = options.chunks ?? 3;
  }

  /** Queues scripted answers; each chat call takes the next one, then falls back to the default reply. */
  enqueue(...steps: MockStep[]): this {
    this.script.push(...steps);
    return this;
  }

  /** Scripted answers not yet used. */
  get pending(): number {
    return this.script.length;
  }

  /** Forgets the script and the recorded requests. */
  reset(): void {
    this.script.length = 0;
    this.requests.length = 0;
  }

  async chat(req: ChatRequest, opts: ChatOptions = {}): Promise<ChatResult> {
    if (opts.signal?.aborted) throw new ModelAbortError();
    this.requests.push(req);
    const id = ++this.callCount;
    let step: MockStep = this.script.shift() ?? { text: mockReplyText(req.messages) };
    while (typeof step === 'function') step = await step(req);
    if (step.delayMs) await sleep(step.delayMs, opts.signal);

    if ('error' in step) throw this.toError(step.error, req.model, step.retryAfterMs);

    let text = step.text ?? '';
    let toolCalls: ToolCall[] = [];
    let finishReason = 'stop';
    if ('toolCalls' in step) {
      toolCalls = step.toolCalls.map((c, i) => ({
        id: c.id ?? `call_mock_${id}_${i}`,
        name: c.name,
        arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
      }));
      finishReason = 'tool_calls';
    } else if (step.finishReason) {
      finishReason = step.finishReason;
    }
    const pieces = splitIntoChunks(text, 'chunks' in step && step.chunks ? step.chunks : this.chunks);
    text = '';
    for (const piece of pieces) {
      if (this.chunkDelayMs) await sleep(this.chunkDelayMs, opts.signal);
      else await new Promise<void>((resolve) => setImmediate(resolve));
      if (opts.signal?.aborted) throw new ModelAbortError();
      text += piece;
      opts.onDelta?.(piece);
    }
    const usage: Usage = {
      inputTokens: estimateMessages(req.messages) + estimateTools(req.tools),
      outputTokens: estimateTokens(text) + toolCalls.reduce((n, c) => n + estimateTokens(c.arguments), 0),
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      estimated: true,
    };
    return { text, toolCalls, finishReason, usage, model: req.model || this.model, provider: this.name };
  }

  /**
   * Deterministic unit vectors by feature hashing of lower-cased words: equal texts give equal vectors and
   * texts sharing words point in similar directions, so vector search behaves plausibly in tests.
   */
  async embed(texts: string[], opts: EmbedOptions = {}): Promise<number[][]> {
    if (opts.signal?.aborted) throw new ModelAbortError();
    return texts.map((t) => this.vector(t));
  }

  async ping(): Promise<void> {}

  async dispose(): Promise<void> {}

  private vector(text: string): number[] {
    const v = new Array<number>(this.dimension).fill(0);
    const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    for (const word of words.length ? words : ['\u0000empty']) {
      const h = createHash('sha256').update(word).digest();
      for (let k = 0; k < 4; k++) {
        const index = h.readUInt32LE(k * 4) % this.dimension;
        v[index]! += h[16 + k]! & 1 ? 1 : -1;
      }
    }
    let norm = Math.hypot(...v);
    if (norm === 0) {
      v[0] = 1;
      norm = 1;
    }
    return v.map((x) => x / norm);
  }

  private toError(error: Error | MockErrorKind, model: string, retryAfterMs?: number): Error {
    if (error instanceof Error) return error;
    const context = { provider: this.name, model };
    switch (error) {
      case 'rate-limit':
        return new ModelApiError(`Mock provider: rate limited (429).`, { ...context, status: 429, providerCode: 'rate_limit_exceeded', retryAfterMs: retryAfterMs ?? 1000 });
      case 'server':
        return new ModelApiError(`Mock provider: internal error (500).`, { ...context, status: 500, providerCode: 'server_error' });
      case 'bad-request':
        return new ModelApiError(`Mock provider: bad request (400).`, { ...context, status: 400, providerCode: 'invalid_request_error' });
      case 'context-length':
        return new ContextLengthError(`Mock provider: the prompt exceeds the context length.`, { ...context, status: 400, providerCode: 'context_length_exceeded' });
      case 'transport':
        return new ModelTransportError(`Mock provider: connection refused.`, context);
      default:
        return assertNever(error, 'mock error kind');
    }
  }
}
