import { AppError } from '../../common/errors';

// === Error taxonomy of model calls (STYLE §6.11)
// A provider that *answered* with an error is a `ModelApiError` (it has a status); one we could not reach
// is a `ModelTransportError`. `classifyModelError` is the single retry policy the queue follows.

/** Where an error happened; never contains credentials. */
export interface ModelErrorContext {
  provider: string;
  model: string;
}

/** Base of every error a model provider throws on purpose (except aborts). Maps to `UPSTREAM_ERROR`. */
export abstract class ModelError extends AppError {
  readonly provider: string;
  readonly model: string;

  protected constructor(message: string, context: ModelErrorContext, extra: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super('UPSTREAM_ERROR', message, { provider: context.provider, model: context.model, ...extra }, options);
    this.provider = context.provider;
    this.model = context.model;
  }
}

/**
 * The provider answered with an error status. `status` is the HTTP status; errors reported inside an
 * already-started stream carry the numeric error code when the provider gave one, else 502.
 */
export class ModelApiError extends ModelError {
  readonly status: number;
  /** The provider's error code (`rate_limit_exceeded`, `context_length_exceeded`, …), when given. */
  readonly providerCode: string | null;
  /** How long the provider asked us to wait (`retry-after-ms` / `Retry-After`), when given. */
  readonly retryAfterMs: number | null;

  constructor(
    message: string,
    init: ModelErrorContext & { status: number; providerCode?: string | null; retryAfterMs?: number | null },
    options?: { cause?: unknown },
  ) {
    super(message, init, { status: init.status, providerCode: init.providerCode ?? null }, options);
    this.status = init.status;
    this.providerCode = init.providerCode ?? null;
    this.retryAfterMs = init.retryAfterMs ?? null;
  }
}

/** The prompt does not fit the model's context window; the caller should compact and retry once. */
export class ContextLengthError extends ModelApiError {}

/** The provider could not be reached: connection refused, DNS failure, reset, timeout. */
export class ModelTransportError extends ModelError {
  constructor(message: string, context: ModelErrorContext, cause?: unknown) {
    super(message, context, {}, { cause });
  }
}

/** The provider answered 2xx but the body was not a valid response (malformed JSON, missing fields). */
export class ModelResponseError extends ModelError {
  constructor(message: string, context: ModelErrorContext, cause?: unknown) {
    super(message, context, {}, { cause });
  }
}

/** The caller aborted the call. Named `AbortError` like the platform's, so generic abort checks work. */
export class ModelAbortError extends Error {
  constructor(message = 'The model call was aborted.', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AbortError';
  }
}

// === Retry-After

/** Anything that can look up a header by name: a fetch `Headers`, or a plain (lower-case keyed) object. */
export type HeaderSource = { get(name: string): string | null | undefined } | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null | undefined }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * How long to wait before retrying, from `retry-after-ms` (milliseconds, non-standard but sent by OpenAI)
 * or `Retry-After` (delta seconds or an HTTP date). Returns null when absent or unparseable; never negative.
 */
export function parseRetryAfterMs(headers: HeaderSource | null | undefined, now: number = Date.now()): number | null {
  if (!headers) return null;
  const ms = header(headers, 'retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms));
  const value = header(headers, 'retry-after')?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  // HTTP dates always name a weekday and month; this keeps `-5` and other junk from parsing as a year.
  if (!/[a-z]{3}/i.test(value)) return null;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}

// === Classification

/** What the caller should do with a failed model call. */
export type ModelErrorClass = 'retry' | 'rate-limit' | 'context-length' | 'fatal';

/** True for any abort: ours (`ModelAbortError`), the platform's `AbortError`, or the OpenAI SDK's. */
export function isAbortError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const name = (err as { name?: unknown }).name;
  const ctor = (err as { constructor?: { name?: unknown } }).constructor?.name;
  return name === 'AbortError' || ctor === 'APIUserAbortError';
}

/**
 * The retry policy of model calls:
 * - aborts → `fatal` (never retried);
 * - `ContextLengthError` → `context-length` (compact, then retry once);
 * - 429 → `rate-limit` (wait `retryAfterMs` when given);
 * - 5xx, 408, transport failures and malformed responses → `retry` (with back-off);
 * - any other 4xx, and errors that are not model errors → `fatal`.
 */
export function classifyModelError(err: unknown): ModelErrorClass {
  if (isAbortError(err)) return 'fatal';
  if (err instanceof ContextLengthError) return 'context-length';
  if (err instanceof ModelApiError) {
    if (err.status === 429) return 'rate-limit';
    if (err.status === 408 || err.status >= 500) return 'retry';
    return 'fatal';
  }
  if (err instanceof ModelTransportError || err instanceof ModelResponseError) return 'retry';
  return 'fatal';
}

// === Context-length detection

const CONTEXT_CODES = new Set(['context_length_exceeded', 'exceed_context_size_error', 'context_window_exceeded', 'string_above_max_length']);
const CONTEXT_MESSAGE =
  /context[ _-]?length|context[ _-]?window|maximum context|context size|exceeds? the (available |maximum )?context|prompt is too long|too many tokens|input is too long/i;

/** Whether a provider error means "the prompt is too long" (status 400/413 or an in-stream error). */
export function looksLikeContextLength(status: number, code: string | null | undefined, message: string): boolean {
  if (status !== 400 && status !== 413 && status !== 502) return false;
  return (code != null && CONTEXT_CODES.has(code)) || CONTEXT_MESSAGE.test(message);
}

// === Crossing process boundaries
// BullMQ keeps only `failedReason` (a string) of a failed job; a worker that wants the caller to see the
// same error class can return `serializeModelError(err)` and the caller rebuilds it.

/** JSON-safe form of a model error. */
export interface SerializedModelError {
  kind: 'api' | 'context-length' | 'transport' | 'response' | 'abort' | 'other';
  message: string;
  provider?: string;
  model?: string;
  status?: number;
  providerCode?: string | null;
  retryAfterMs?: number | null;
}

export function serializeModelError(err: unknown): SerializedModelError {
  const message = err instanceof Error ? err.message : String(err);
  if (isAbortError(err)) return { kind: 'abort', message };
  if (err instanceof ModelApiError) {
    return {
      kind: err instanceof ContextLengthError ? 'context-length' : 'api',
      message,
      provider: err.provider,
      model: err.model,
      status: err.status,
      providerCode: err.providerCode,
      retryAfterMs: err.retryAfterMs,
    };
  }
  if (err instanceof ModelTransportError) return { kind: 'transport', message, provider: err.provider, model: err.model };
  if (err instanceof ModelResponseError) return { kind: 'response', message, provider: err.provider, model: err.model };
  return { kind: 'other', message };
}

/** Rebuilds the error class from `serializeModelError` output (the cause is not preserved). */
export function deserializeModelError(data: SerializedModelError): Error {
  const context = { provider: data.provider ?? 'unknown', model: data.model ?? 'unknown' };
  switch (data.kind) {
    case 'abort':
      return new ModelAbortError(data.message);
    case 'api':
    case 'context-length': {
      const init = { ...context, status: data.status ?? 502, providerCode: data.providerCode, retryAfterMs: data.retryAfterMs };
      return data.kind === 'context-length' ? new ContextLengthError(data.message, init) : new ModelApiError(data.message, init);
    }
    case 'transport':
      return new ModelTransportError(data.message, context);
    case 'response':
      return new ModelResponseError(data.message, context);
    case 'other':
      return new Error(data.message);
    default: {
      const never: never = data.kind;
      return new Error(`${data.message} (${String(never)})`);
    }
  }
}
