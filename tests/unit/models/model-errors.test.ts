import {
  ContextLengthError,
  ModelAbortError,
  ModelApiError,
  ModelResponseError,
  ModelTransportError,
  classifyModelError,
  deserializeModelError,
  isAbortError,
  looksLikeContextLength,
  parseRetryAfterMs,
  serializeModelError,
} from '../../../server/modules/models';
import { AppError } from '../../../server/common/errors';

const ctx = { provider: 'p', model: 'm' };
const api = (status: number, providerCode: string | null = null) => new ModelApiError(`HTTP ${status}`, { ...ctx, status, providerCode });

describe('classifyModelError', () => {
  it.each([
    [429, 'rate-limit'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
    [504, 'retry'],
    [408, 'retry'],
    [400, 'fatal'],
    [401, 'fatal'],
    [403, 'fatal'],
    [404, 'fatal'],
    [422, 'fatal'],
  ] as const)('ModelApiError %i → %s', (status, expected) => {
    expect(classifyModelError(api(status))).toBe(expected);
  });

  it('context length → context-length (even though it is a 400)', () => {
    expect(classifyModelError(new ContextLengthError('too long', { ...ctx, status: 400, providerCode: 'context_length_exceeded' }))).toBe('context-length');
  });

  it('transport and malformed responses → retry', () => {
    expect(classifyModelError(new ModelTransportError('refused', ctx, new Error('ECONNREFUSED')))).toBe('retry');
    expect(classifyModelError(new ModelResponseError('bad json', ctx))).toBe('retry');
  });

  it('aborts of every origin → fatal', () => {
    expect(classifyModelError(new ModelAbortError())).toBe('fatal');
    expect(classifyModelError(new DOMException('stop', 'AbortError'))).toBe('fatal');
    const controller = new AbortController();
    controller.abort();
    expect(isAbortError(controller.signal.reason)).toBe(true);
    class APIUserAbortError extends Error {}
    expect(isAbortError(new APIUserAbortError())).toBe(true);
  });

  it('anything else → fatal', () => {
    expect(classifyModelError(new Error('bug'))).toBe('fatal');
    expect(classifyModelError('string')).toBe('fatal');
    expect(classifyModelError(null)).toBe('fatal');
  });

  it('model errors are AppErrors with UPSTREAM_ERROR and no secrets in details', () => {
    const err = new ModelApiError('nope', { ...ctx, status: 429, providerCode: 'rate_limit_exceeded', retryAfterMs: 1200 });
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe('UPSTREAM_ERROR');
    expect(err.name).toBe('ModelApiError');
    expect(err.details).toEqual({ provider: 'p', model: 'm', status: 429, providerCode: 'rate_limit_exceeded' });
    expect(new ContextLengthError('x', { ...ctx, status: 400 }).name).toBe('ContextLengthError');
    expect(new ModelTransportError('x', ctx).name).toBe('ModelTransportError');
    expect(new ModelAbortError().name).toBe('AbortError');
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it('reads delta seconds, also fractional', () => {
    expect(parseRetryAfterMs(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(parseRetryAfterMs(new Headers({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(parseRetryAfterMs(new Headers({ 'retry-after': '0' }), now)).toBe(0);
  });

  it('reads an HTTP date relative to now, never negative', () => {
    expect(parseRetryAfterMs(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }), now)).toBe(30_000);
    expect(parseRetryAfterMs(new Headers({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }), now)).toBe(0);
  });

  it('prefers retry-after-ms', () => {
    expect(parseRetryAfterMs(new Headers({ 'retry-after-ms': '1500', 'retry-after': '30' }), now)).toBe(1500);
    expect(parseRetryAfterMs(new Headers({ 'retry-after-ms': 'soon', 'retry-after': '3' }), now)).toBe(3000);
  });

  it('accepts plain header records (any case)', () => {
    expect(parseRetryAfterMs({ 'retry-after': '4' }, now)).toBe(4000);
    expect(parseRetryAfterMs({ 'Retry-After': '5' }, now)).toBe(5000);
    expect(parseRetryAfterMs({ 'retry-after': ['6', '7'] }, now)).toBe(6000);
  });

  it('returns null when absent or unparseable', () => {
    expect(parseRetryAfterMs(undefined, now)).toBeNull();
    expect(parseRetryAfterMs(new Headers(), now)).toBeNull();
    expect(parseRetryAfterMs(new Headers({ 'retry-after': 'later' }), now)).toBeNull();
    expect(parseRetryAfterMs(new Headers({ 'retry-after': '-5' }), now)).toBeNull();
  });
});

describe('looksLikeContextLength', () => {
  it('recognizes codes and the messages of common servers', () => {
    expect(looksLikeContextLength(400, 'context_length_exceeded', 'whatever')).toBe(true);
    expect(looksLikeContextLength(400, 'exceed_context_size_error', 'x')).toBe(true);
    expect(looksLikeContextLength(400, null, "This model's maximum context length is 4096 tokens.")).toBe(true);
    expect(looksLikeContextLength(400, null, 'the request exceeds the available context size, try increasing it')).toBe(true);
    expect(looksLikeContextLength(413, null, 'prompt is too long: 210000 tokens > 200000 maximum')).toBe(true);
  });

  it('ignores other errors', () => {
    expect(looksLikeContextLength(400, 'invalid_request_error', 'messages[0].role is invalid')).toBe(false);
    expect(looksLikeContextLength(500, 'context_length_exceeded', 'x')).toBe(false);
    expect(looksLikeContextLength(429, null, 'too many tokens per minute')).toBe(false);
  });
});

describe('serializeModelError / deserializeModelError', () => {
  it.each([
    new ModelApiError('rate', { ...ctx, status: 429, providerCode: 'rate_limit_exceeded', retryAfterMs: 900 }),
    new ContextLengthError('long', { ...ctx, status: 400, providerCode: 'context_length_exceeded' }),
    new ModelTransportError('refused', ctx),
    new ModelResponseError('garbled', ctx),
    new ModelAbortError('stopped'),
  ])('round-trips %p with class and classification', (err) => {
    const json = JSON.parse(JSON.stringify(serializeModelError(err))) as ReturnType<typeof serializeModelError>;
    const back = deserializeModelError(json);
    expect(back.constructor).toBe(err.constructor);
    expect(back.message).toBe(err.message);
    expect(classifyModelError(back)).toBe(classifyModelError(err));
    if (err instanceof ModelApiError) expect(back).toMatchObject({ status: err.status, retryAfterMs: err.retryAfterMs, providerCode: err.providerCode, provider: 'p', model: 'm' });
  });

  it('other errors become plain fatal errors', () => {
    const back = deserializeModelError(serializeModelError(new TypeError('bug')));
    expect(back.message).toBe('bug');
    expect(classifyModelError(back)).toBe('fatal');
  });
});
