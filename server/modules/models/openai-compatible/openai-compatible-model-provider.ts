import type OpenAI from 'openai';
import { ConfigError } from '../../../common/errors';
import type { Logger } from '../../../common/logger';
import {
  ContextLengthError,
  ModelAbortError,
  ModelApiError,
  ModelError,
  type ModelErrorContext,
  ModelResponseError,
  ModelTransportError,
  looksLikeContextLength,
  parseRetryAfterMs,
} from '../model.errors';
import type {
  ChatOptions,
  ChatRequest,
  ChatResult,
  EmbedOptions,
  ModelProvider,
  Usage,
} from '../model-provider';
import { redactUrl } from '../presets';
import { estimateMessages, estimateTokens, estimateTools } from '../token-estimator';
import { nodeHttpFetch, type NodeHttpFetch } from './node-http-fetch';
import {
  WireParseError,
  buildChatBody,
  parseChunk,
  parseCompletion,
  parseEmbeddings,
  parseModelList,
  ToolCallAssembler,
  type WireCapabilities,
} from './wire';

type OpenAISdk = typeof import('openai');
let sdkModule: OpenAISdk | null = null;
/** The `openai` SDK (≈ 150 files), loaded with the first client rather than at start. */
function sdk(): OpenAISdk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  sdkModule ??= require('openai') as OpenAISdk;
  return sdkModule;
}

/** What the dry run of `prepare` is answered: one embedding, as a server sends it. */
const DRY_RUN_ANSWER = JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0] }], model: 'dry-run', usage: { prompt_tokens: 2, total_tokens: 2 } });

/** Settings of one OpenAI-compatible endpoint (Ollama, vLLM, LM Studio, OpenAI, OpenRouter, NVIDIA NIM, …). */
export interface OpenAICompatibleModelProviderOptions {
  /** The provider's key in `ai.providers`. */
  name: string;
  /** Base URL including the version path, e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`; null or empty sends no Authorization header. @default null */
  apiKey?: string | null;
  /** Default model, used by `embed` when no model is given. @default null */
  model?: string | null;
  /** @default 8192 */
  contextWindow?: number;
  /** @default 1 */
  maxConcurrency?: number;
  /** Limit of one whole call (connect, wait and streaming); exceeding it is a `ModelTransportError`. @default 120000 */
  timeoutMs?: number;
  /** @default true */
  supportsTools?: boolean;
  /** @default false */
  supportsVision?: boolean;
  /** Stream chat completions (SSE); false asks for one JSON body. @default true */
  stream?: boolean;
  /** Request field for `maxTokens`. @default 'max_tokens' */
  maxTokensParam?: 'max_tokens' | 'max_completion_tokens';
  /** Extra headers on every request (e.g. OpenRouter's `HTTP-Referer` / `X-Title`). @default {} */
  headers?: Record<string, string>;
  /** Receives one debug line per call. @default none */
  logger?: Logger;
  /** Also log prompts and completions (`log.sensitive`). @default false */
  sensitiveLogs?: boolean;
}

type Resolved = Required<Omit<OpenAICompatibleModelProviderOptions, 'logger' | 'apiKey' | 'model'>> & {
  apiKey: string | null;
  model: string | null;
  logger: Logger | null;
};

/** An error thrown by a caller's `onDelta`; passed through unchanged instead of being classified. */
class DeltaCallbackError extends Error {
  constructor(readonly original: unknown) {
    super('onDelta threw');
  }
}

/**
 * `ModelProvider` for any server that speaks the OpenAI chat-completions API, through the `openai` SDK
 * with retries off (the `model-calls` queue retries). Chat calls stream (`stream_options.include_usage`)
 * and assemble tool-call fragments; embeddings ask for floats and still accept base64.
 */
export class OpenAICompatibleModelProvider implements ModelProvider {
  readonly name: string;
  readonly contextWindow: number;
  readonly maxConcurrency: number;
  readonly supportsTools: boolean;
  readonly supportsVision: boolean;
  private readonly options: Resolved;
  private sdkClient: OpenAI | null = null;
  private http: NodeHttpFetch | null = null;

  constructor(options: OpenAICompatibleModelProviderOptions) {
    this.options = {
      name: options.name,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      apiKey: options.apiKey || null,
      model: options.model ?? null,
      contextWindow: options.contextWindow ?? 8192,
      maxConcurrency: options.maxConcurrency ?? 1,
      timeoutMs: options.timeoutMs ?? 120_000,
      supportsTools: options.supportsTools ?? true,
      supportsVision: options.supportsVision ?? false,
      stream: options.stream ?? true,
      maxTokensParam: options.maxTokensParam ?? 'max_tokens',
      headers: options.headers ?? {},
      logger: options.logger ?? null,
      sensitiveLogs: options.sensitiveLogs ?? false,
    };
    if (!(this.options.timeoutMs > 0))
      throw new ConfigError(
        `Model provider "${options.name}": timeoutMs must be positive (got ${options.timeoutMs}).`,
      );
    this.name = this.options.name;
    this.contextWindow = this.options.contextWindow;
    this.maxConcurrency = this.options.maxConcurrency;
    this.supportsTools = this.options.supportsTools;
    this.supportsVision = this.options.supportsVision;
  }

  /** The SDK client, made on first use. */
  private get client(): OpenAI {
    this.http ??= nodeHttpFetch();
    this.sdkClient ??= new (sdk().default)({
      fetch: this.http.fetch,
      // The SDK insists on a key; without one the Authorization header is removed below (null unsets it).
      apiKey: this.options.apiKey ?? 'no-key',
      baseURL: this.options.baseUrl,
      maxRetries: 0,
      timeout: this.options.timeoutMs,
      // Pass these explicitly so OPENAI_ORG_ID / OPENAI_PROJECT_ID / OPENAI_ADMIN_KEY in the environment never
      // leak to a non-OpenAI endpoint.
      organization: null,
      project: null,
      adminAPIKey: null,
      webhookSecret: null,
      logLevel: 'off',
      defaultHeaders: { ...this.options.headers, ...(this.options.apiKey ? {} : { Authorization: null }) },
    });
    return this.sdkClient;
  }

  /**
   * Loads the SDK and makes the client, which the first call would do, then runs its request path once on
   * a throwaway client whose fetch answers on the spot (nothing is sent): the first call also loaded the
   * globals fetch is made of (Headers, Response) and ran the SDK's code cold, ≈ 50 ms more on the event loop.
   */
  prepare(): void {
    void this.client;
    const dryRun = new (sdk().default)({
      apiKey: 'dry-run',
      baseURL: 'http://dry-run.invalid/v1',
      maxRetries: 0,
      organization: null,
      project: null,
      adminAPIKey: null,
      webhookSecret: null,
      logLevel: 'off',
      fetch: async () => new Response(DRY_RUN_ANSWER, { status: 200, headers: { 'content-type': 'application/json' } }),
    });
    void dryRun.embeddings.create({ model: 'dry-run', input: ['dry run'], encoding_format: 'float' }).catch(() => undefined);
  }

  /** The endpoint, without credentials. */
  get baseUrl(): string {
    return redactUrl(this.options.baseUrl);
  }

  /** The default model, or null. */
  get defaultModel(): string | null {
    return this.options.model;
  }

  // === Chat

  async chat(req: ChatRequest, opts: ChatOptions = {}): Promise<ChatResult> {
    const context = { provider: this.name, model: req.model };
    const caps: WireCapabilities = { supportsTools: this.supportsTools, supportsVision: this.supportsVision };
    const body = buildChatBody(req, caps, { maxTokensParam: this.options.maxTokensParam });
    const started = Date.now();
    const result = await this.guarded(context, opts.signal, async (signal) => {
      if (!this.options.stream) {
        const json: unknown = await this.client.chat.completions.create(
          { ...body, stream: false },
          { signal },
        );
        const parsed = parseCompletion(json);
        if (parsed.text) this.emit(opts.onDelta, parsed.text);
        return { ...parsed, finishReason: parsed.finishReason };
      }
      const stream = await this.client.chat.completions.create(
        { ...body, stream: true, stream_options: { include_usage: true } },
        { signal },
      );
      const calls = new ToolCallAssembler();
      let text = '';
      let reasoning = '';
      let model: string | undefined;
      let finishReason: string | undefined;
      let usage: Omit<Usage, 'estimated'> | null = null;
      for await (const raw of stream) {
        const chunk = parseChunk(raw as unknown);
        model ??= chunk.model;
        if (chunk.usage) usage = chunk.usage;
        if (chunk.finishReason) finishReason = chunk.finishReason;
        if (chunk.reasoning) reasoning += chunk.reasoning;
        for (const delta of chunk.toolCalls) calls.add(delta);
        if (chunk.content) {
          text += chunk.content;
          this.emit(opts.onDelta, chunk.content);
        }
      }
      // The SDK ends the iteration quietly when the request is aborted; `guarded` turns that into an error.
      if (signal.aborted)
        return { model, text, reasoning: reasoning || undefined, toolCalls: [], finishReason, usage };
      // It also ends quietly when the stream stops before `[DONE]`: without a finish reason the answer may
      // be cut off (or the body was not a completion stream at all), so it is not taken as the answer.
      if (!finishReason)
        throw new WireParseError('the stream ended before the model finished its answer (no finish_reason)');
      return {
        model,
        text,
        reasoning: reasoning || undefined,
        toolCalls: calls.finish(),
        finishReason,
        usage,
      };
    });
    const usage: Usage = result.usage
      ? { ...result.usage, estimated: false }
      : {
          inputTokens:
            estimateMessages(req.messages) + estimateTools(this.supportsTools ? req.tools : undefined),
          outputTokens:
            estimateTokens(result.text) +
            result.toolCalls.reduce((n, c) => n + estimateTokens(c.name) + estimateTokens(c.arguments), 0),
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          estimated: true,
        };
    const chatResult: ChatResult = {
      text: result.text,
      toolCalls: result.toolCalls,
      finishReason: result.finishReason ?? (result.toolCalls.length ? 'tool_calls' : 'stop'),
      usage,
      model: result.model || req.model,
      provider: this.name,
      ...(result.reasoning ? { reasoning: result.reasoning } : {}),
    };
    this.options.logger?.debug(
      {
        provider: this.name,
        model: chatResult.model,
        ms: Date.now() - started,
        finishReason: chatResult.finishReason,
        toolCalls: chatResult.toolCalls.length,
        usage,
        ...(this.options.sensitiveLogs ? { messages: req.messages, text: chatResult.text } : {}),
      },
      'model call finished',
    );
    return chatResult;
  }

  // === Embeddings

  async embed(texts: string[], opts: EmbedOptions = {}): Promise<number[][]> {
    const model = opts.model ?? this.options.model;
    if (!model) {
      throw new ConfigError(
        `Model provider "${this.name}" has no embedding model. Fix: set ai.roles.embeddings.model or ai.providers.${this.name}.model.`,
      );
    }
    if (texts.length === 0) return [];
    return this.guarded({ provider: this.name, model }, opts.signal, async (signal) => {
      // 'float' explicitly: left unset, the SDK asks for base64 and only then decodes it itself.
      const json: unknown = await this.client.embeddings.create(
        { model, input: texts, encoding_format: 'float' },
        { signal },
      );
      const vectors = parseEmbeddings(json, texts.length);
      const reported = (json as { usage?: { prompt_tokens?: unknown } } | null)?.usage?.prompt_tokens;
      if (opts.onUsage && typeof reported === 'number' && Number.isFinite(reported) && reported >= 0) opts.onUsage(reported);
      return vectors;
    });
  }

  // === Health

  /** Model ids the server lists at `/models`. */
  async listModels(signal?: AbortSignal): Promise<string[]> {
    return this.guarded({ provider: this.name, model: this.options.model ?? '-' }, signal, async (s) => {
      const json: unknown = await this.client.get('/models', { signal: s });
      return parseModelList(json);
    });
  }

  async ping(signal?: AbortSignal): Promise<void> {
    await this.listModels(signal);
  }

  async dispose(): Promise<void> {
    this.http?.close();
    this.http = null;
    this.sdkClient = null;
  }

  // === Errors, aborts and timeouts

  private emit(onDelta: ChatOptions['onDelta'], text: string): void {
    if (!onDelta) return;
    try {
      onDelta(text);
    } catch (err) {
      throw new DeltaCallbackError(err);
    }
  }

  /**
   * Runs one request under the caller's signal and the call timeout, and maps every failure to the model
   * error taxonomy. An aborted caller always gets `ModelAbortError`, even when the SDK swallowed the abort.
   */
  private async guarded<T>(
    context: ModelErrorContext,
    callerSignal: AbortSignal | undefined,
    run: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    if (callerSignal?.aborted) throw new ModelAbortError(undefined, { cause: callerSignal.reason });
    const controller = new AbortController();
    let timedOut = false;
    const onAbort = (): void => controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.options.timeoutMs);
    try {
      const result = await run(controller.signal);
      if (controller.signal.aborted) throw new (sdk().APIUserAbortError)();
      return result;
    } catch (err) {
      if (err instanceof DeltaCallbackError) throw err.original;
      if (callerSignal?.aborted) throw new ModelAbortError(undefined, { cause: callerSignal.reason });
      if (timedOut) {
        throw new ModelTransportError(
          `Model provider "${this.name}" (${context.model}) did not answer within ${this.options.timeoutMs} ms (ai.providers.${this.name}.timeout_ms).`,
          context,
          err,
        );
      }
      throw this.toModelError(err, context);
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onAbort);
    }
  }

  private redact(text: string): string {
    const key = this.options.apiKey;
    return key && key.length >= 4 ? text.split(key).join('[REDACTED]') : text;
  }

  /** Maps SDK, fetch and parse failures to ModelApiError / ContextLengthError / ModelTransportError / ModelResponseError. */
  private toModelError(err: unknown, context: ModelErrorContext): unknown {
    if (err instanceof ModelError || err instanceof ModelAbortError) return err;
    const where = `Model provider "${this.name}" (${context.model})`;
    if (err instanceof WireParseError || err instanceof SyntaxError) {
      return new ModelResponseError(
        this.redact(`${where} returned a response we cannot read: ${err.message}.`),
        context,
        err,
      );
    }
    const { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } = sdk();
    if (err instanceof APIUserAbortError) return new ModelAbortError();
    if (err instanceof APIConnectionTimeoutError) {
      return new ModelTransportError(`${where} at ${this.baseUrl} timed out.`, context, err);
    }
    if (err instanceof APIConnectionError) {
      return new ModelTransportError(
        this.redact(`Cannot reach model provider "${this.name}" at ${this.baseUrl}: ${describeCause(err)}.`),
        context,
        err,
      );
    }
    if (err instanceof APIError) {
      const body = (err.error ?? {}) as { message?: unknown; code?: unknown; type?: unknown };
      const detail = typeof body.message === 'string' && body.message ? body.message : err.message;
      const rawCode = body.code ?? err.code ?? body.type ?? null;
      // Errors inside an already-started stream have no HTTP status; OpenRouter puts it in `code`.
      const streamStatus = typeof rawCode === 'number' && rawCode >= 400 && rawCode < 600 ? rawCode : 502;
      const status = err.status ?? streamStatus;
      const providerCode = rawCode === null || rawCode === undefined ? null : String(rawCode);
      const init = { ...context, status, providerCode, retryAfterMs: parseRetryAfterMs(err.headers) };
      const message = this.redact(
        `${where} answered ${status}${err.status ? '' : ' (in stream)'}: ${detail}`,
      );
      // No `cause`: the SDK error repeats the raw body, which may echo what we sent; the fields above carry it all.
      if (looksLikeContextLength(status, providerCode, detail)) return new ContextLengthError(message, init);
      return new ModelApiError(message, init);
    }
    if (isNetworkFailure(err)) {
      return new ModelTransportError(
        this.redact(`${where}: the connection failed: ${describeCause(err)}.`),
        context,
        err,
      );
    }
    return err;
  }
}

const NETWORK_CODES = /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/;

/** undici reports a dropped stream as `TypeError: terminated` with a socket error as cause. */
function isNetworkFailure(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.test(code)) return true;
    const message = (e as { message?: unknown }).message;
    if (
      typeof message === 'string' &&
      /terminated|socket|fetch failed|other side closed|network/i.test(message)
    )
      return true;
  }
  return false;
}

/** The most specific message in an error's cause chain, e.g. `connect ECONNREFUSED 127.0.0.1:9`. */
function describeCause(err: unknown): string {
  let best = err instanceof Error ? err.message : String(err);
  for (
    let e: unknown = (err as { cause?: unknown })?.cause, depth = 0;
    e && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const message = (e as { message?: unknown }).message;
    const code = (e as { code?: unknown }).code;
    if (typeof message === 'string' && message) best = message;
    else if (typeof code === 'string') best = code;
    if (Array.isArray((e as { errors?: unknown }).errors)) {
      // Node's happy-eyeballs connect reports an AggregateError with one error per address.
      const first = (e as { errors: unknown[] }).errors[0] as { message?: unknown } | undefined;
      if (typeof first?.message === 'string') best = first.message;
    }
  }
  return best;
}
