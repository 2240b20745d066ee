import { createHash } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// === A fake OpenAI-compatible server (real HTTP on 127.0.0.1, port 0)
// Speaks enough of the chat-completions, embeddings and models API for the `openai` SDK: JSON and SSE
// streaming (`data: [DONE]`, a usage chunk when `stream_options.include_usage`), native tool calls streamed
// as fragments, tool calls as JSON text, errors with the shapes and headers real servers send, and
// requests that hang until the client gives up. Every request is recorded with timestamps, so tests can
// assert what the model was shown and whether calls overlapped.

/** A tool call the fake model makes. Arguments given as an object are serialized to JSON. */
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments?: string | Record<string, unknown>;
}

/** Usage the fake reports; omitted fields are estimated from the request and reply (≈ 4 chars a token). */
export interface FakeUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_tokens?: number;
}

/** An error response: status, OpenAI-style body and the headers that go with it. */
export interface FakeError {
  status: number;
  message?: string;
  code?: string | null;
  type?: string;
  /** `Retry-After` header value: seconds or an HTTP date. */
  retryAfter?: number | string;
  /** `retry-after-ms` header value. */
  retryAfterMs?: number;
  headers?: Record<string, string>;
}

interface ReplyTiming {
  /** Wait before sending headers. @default 0 */
  delayMs?: number;
  /** Pieces the text is streamed in. @default the server's `chunks` (3) */
  chunks?: number;
  /** Pause between streamed pieces. @default the server's `chunkDelayMs` (0) */
  chunkDelayMs?: number;
  /** Usage to report; null reports none (so the client must estimate). @default estimated */
  usage?: FakeUsage | null;
  /** Model name in the response. @default the requested one */
  model?: string;
}

/** One scripted answer of `/v1/chat/completions`. A function is called with the recorded request. */
export type FakeChatReply =
  | (ReplyTiming & {
      text: string;
      finishReason?: string;
      /** Streamed separately as `delta.reasoning_content`. */
      reasoning?: string;
      /** After the text, keep the stream open until the client disconnects. */
      hangAfterText?: boolean;
      /** After the text, send `data: {"error": …}` inside the stream and end it. */
      streamError?: { message: string; code?: string | number };
      /**
       * Streaming only: after this many pieces of the text the stream stops without a finish reason or
       * `[DONE]`: `end` ends the response cleanly, `destroy` resets the connection.
       */
      cut?: { afterChunks: number; how: 'end' | 'destroy' };
    })
  | (ReplyTiming & {
      toolCalls: FakeToolCall[];
      text?: string;
      /** `native` streams `tool_calls` deltas; `text` writes `{"tool_calls":[…]}` as content. @default 'native' */
      mode?: 'native' | 'text';
    })
  | { error: FakeError; delayMs?: number }
  | { hang: true }
  | { garbage: FakeGarbage; delayMs?: number }
  | ((req: RecordedRequest) => FakeChatReply | Promise<FakeChatReply>);

/**
 * A 200 answer that is not a chat completion: `html` (a proxy's or web server's page), `not-json`
 * (broken JSON; as SSE, `data:` lines with broken JSON), `wrong-shape` (valid JSON without `choices`;
 * as SSE followed by `[DONE]`), `invalid-sse` (event-stream lines without `data:`, then the stream ends).
 */
export type FakeGarbage = 'html' | 'not-json' | 'wrong-shape' | 'invalid-sse';

/** One scripted answer of `/v1/embeddings`. */
export type FakeEmbeddingsReply =
  | { vectors: number[][]; encoding?: 'float' | 'base64' }
  | { encoding: 'float' | 'base64' }
  | { error: FakeError; delayMs?: number }
  | { hang: true };

/** The parsed JSON body, typed loosely for assertions. */
export interface RecordedBody {
  model?: string;
  messages?: Array<{ role: string; content: unknown; name?: string; tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>; tool_call_id?: string }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  temperature?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  input?: string | string[];
  encoding_format?: string;
  [key: string]: unknown;
}

/** What the fake saw of one request. Times are epoch milliseconds with sub-millisecond precision. */
export interface RecordedRequest {
  seq: number;
  method: string;
  /** e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  body: RecordedBody | null;
  startedAt: number;
  /** When the response ended or the client went away; null while running. */
  endedAt: number | null;
  status: number | null;
  /** The client disconnected before the response was complete. */
  aborted: boolean;
  /** When the first streamed chunk was written (streamed chat answers only). */
  firstChunkAt?: number;
}

export interface FakeOpenAIServerOptions {
  /** When set, requests without `Authorization: Bearer <apiKey>` get 401. @default none */
  apiKey?: string;
  /** Ids listed by `/v1/models`. @default ['fake-model'] */
  models?: string[];
  /** Default pieces per streamed text. @default 3 */
  chunks?: number;
  /** Default pause between streamed pieces. @default 0 */
  chunkDelayMs?: number;
  /** Dimension of the default embeddings. @default 8 */
  embeddingDimension?: number;
  /** Encoding of embeddings regardless of `encoding_format` (simulates servers that ignore it). @default as requested */
  forceEmbeddingEncoding?: 'float' | 'base64';
  /** Port to listen on, e.g. one a provider was configured with before the fake was up. @default 0 (any free port) */
  port?: number;
}

/** Builders for common replies. */
export const FakeReplies = {
  text: (text: string, timing: Omit<Extract<FakeChatReply, { text: string; finishReason?: string }>, 'text'> = {}): FakeChatReply => ({ ...timing, text }),
  toolCalls: (calls: FakeToolCall[], extra: Omit<Extract<FakeChatReply, { toolCalls: FakeToolCall[] }>, 'toolCalls'> = {}): FakeChatReply => ({ ...extra, toolCalls: calls }),
  textToolCalls: (calls: FakeToolCall[]): FakeChatReply => ({ toolCalls: calls, mode: 'text' }),
  rateLimited: (retryAfterSeconds: number | string = 1, message = 'Rate limit reached. Please try again later.'): FakeChatReply => ({
    error: { status: 429, message, code: 'rate_limit_exceeded', type: 'requests', retryAfter: retryAfterSeconds },
  }),
  serverError: (status = 500, message = 'The server had an error while processing your request.'): FakeChatReply => ({
    error: { status, message, code: null, type: 'server_error' },
  }),
  contextLength: (max = 8192): FakeChatReply => ({
    error: {
      status: 400,
      message: `This model's maximum context length is ${max} tokens. However, your messages resulted in ${max + 1000} tokens. Please reduce the length of the messages.`,
      code: 'context_length_exceeded',
      type: 'invalid_request_error',
    },
  }),
  hang: (): FakeChatReply => ({ hang: true }),
};

type ChatEndpoint = 'chat' | 'embeddings';

function now(): number {
  return performance.timeOrigin + performance.now();
}

/** Splits text into `n` pieces of about equal length (mid-word on purpose: clients must not care). */
function split(text: string, n: number): string[] {
  if (!text) return [];
  const count = Math.max(1, Math.min(n, text.length));
  const size = Math.ceil(text.length / count);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function parseOrRaw(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function approxTokens(value: unknown): number {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? '');
  return Math.max(1, Math.ceil(text.length / 4));
}

function lastUserText(body: RecordedBody | null): string {
  const user = [...(body?.messages ?? [])].reverse().find((m) => m.role === 'user');
  if (!user) return '';
  if (typeof user.content === 'string') return user.content;
  if (Array.isArray(user.content)) {
    return user.content
      .map((p: { type?: string; text?: string }) => (p.type === 'text' ? (p.text ?? '') : ''))
      .filter(Boolean)
      .join('\n');
  }
  return '';
}

/** A deterministic vector for a text. */
export function fakeEmbedding(text: string, dimension = 8): number[] {
  const out: number[] = [];
  for (let i = 0; out.length < dimension; i++) {
    const h = createHash('sha256').update(`${i}:${text}`).digest();
    for (let k = 0; k + 4 <= h.length && out.length < dimension; k += 4) out.push(Math.round((h.readUInt32LE(k) / 0xffffffff) * 2000 - 1000) / 1000);
  }
  return out;
}

function toBase64(vector: number[]): string {
  const buf = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}

/**
 * @example
 * const fake = await FakeOpenAIServer.start();
 * fake.enqueue({ text: 'Hello there', chunks: 3, chunkDelayMs: 20 }, FakeReplies.rateLimited(2));
 * const provider = new OpenAICompatibleModelProvider({ name: 'fake', baseUrl: fake.baseUrl });
 * // … fake.lastChatRequest()?.body.messages …
 * await fake.close();
 */
export class FakeOpenAIServer {
  /** Every request in arrival order. */
  readonly requests: RecordedRequest[] = [];
  private readonly queues: Record<ChatEndpoint, Array<FakeChatReply | FakeEmbeddingsReply>> = { chat: [], embeddings: [] };
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly waiters = new Set<() => void>();
  private defaultReply: (req: RecordedRequest) => FakeChatReply | Promise<FakeChatReply> = (req) => ({ text: `Echo: ${lastUserText(req.body)}` });
  private seq = 0;
  private closed = false;

  private constructor(
    private readonly server: http.Server,
    readonly options: Required<Omit<FakeOpenAIServerOptions, 'apiKey' | 'forceEmbeddingEncoding' | 'port'>> & Pick<FakeOpenAIServerOptions, 'apiKey' | 'forceEmbeddingEncoding'>,
  ) {}

  static async start(options: FakeOpenAIServerOptions = {}): Promise<FakeOpenAIServer> {
    const server = http.createServer();
    const fake = new FakeOpenAIServer(server, {
      apiKey: options.apiKey,
      models: options.models ?? ['fake-model'],
      chunks: options.chunks ?? 3,
      chunkDelayMs: options.chunkDelayMs ?? 0,
      embeddingDimension: options.embeddingDimension ?? 8,
      forceEmbeddingEncoding: options.forceEmbeddingEncoding,
    });
    server.on('request', (req, res) => void fake.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => (server.off('error', reject), resolve()));
    });
    return fake;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `http://127.0.0.1:<port>/v1`, the base URL to give the client. */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  // === Script

  /** Queues chat replies; each `/chat/completions` request takes the next, then the default responder. */
  enqueue(...replies: FakeChatReply[]): this {
    this.queues.chat.push(...replies);
    return this;
  }

  /** Queues embeddings replies; without any, vectors are derived from the input texts. */
  enqueueEmbeddings(...replies: FakeEmbeddingsReply[]): this {
    this.queues.embeddings.push(...replies);
    return this;
  }

  /** Replaces the default responder (initially `Echo: <last user message>`). */
  setDefault(responder: (req: RecordedRequest) => FakeChatReply | Promise<FakeChatReply>): this {
    this.defaultReply = responder;
    return this;
  }

  /** Scripted replies not yet used. */
  pending(endpoint: ChatEndpoint = 'chat'): number {
    return this.queues[endpoint].length;
  }

  /** Forgets scripts and recorded requests (the default responder stays). */
  reset(): void {
    this.queues.chat.length = 0;
    this.queues.embeddings.length = 0;
    this.requests.length = 0;
  }

  // === Records

  chatRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.path.endsWith('/chat/completions'));
  }

  lastChatRequest(): RecordedRequest | undefined {
    return this.chatRequests().at(-1);
  }

  /** Resolves once `count` requests (optionally only those whose path ends with `pathSuffix`) were seen. */
  async waitForRequests(count: number, options: { pathSuffix?: string; timeoutMs?: number; ended?: boolean } = {}): Promise<RecordedRequest[]> {
    const matching = (): RecordedRequest[] =>
      this.requests.filter((r) => (!options.pathSuffix || r.path.endsWith(options.pathSuffix)) && (!options.ended || r.endedAt !== null));
    const deadline = Date.now() + (options.timeoutMs ?? 5000);
    while (matching().length < count) {
      if (Date.now() > deadline) throw new Error(`FakeOpenAIServer: expected ${count} requests${options.pathSuffix ? ` to *${options.pathSuffix}` : ''}, saw ${matching().length}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 10);
        this.waiters.add(() => (clearTimeout(t), resolve()));
      });
    }
    return matching();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.notify();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // === HTTP

  private notify(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const w of waiters) w();
  }

  private wait(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const record: RecordedRequest = {
      seq: ++this.seq,
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0]!,
      headers: req.headers,
      body: null,
      startedAt: now(),
      endedAt: null,
      status: null,
      aborted: false,
    };
    this.requests.push(record);
    res.on('close', () => {
      record.endedAt = now();
      record.status = res.headersSent ? res.statusCode : null;
      if (!res.writableFinished) record.aborted = true;
      this.notify();
    });
    try {
      const raw = await new Promise<string>((resolve, reject) => {
        let data = '';
        req.setEncoding('utf8');
        req.on('data', (c: string) => (data += c));
        req.on('end', () => resolve(data));
        req.on('error', reject);
      });
      if (raw) {
        try {
          record.body = JSON.parse(raw) as RecordedBody;
        } catch {
          return this.sendError(res, { status: 400, message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error' });
        }
      }
      this.notify();
      if (this.options.apiKey && req.headers.authorization !== `Bearer ${this.options.apiKey}`) {
        return this.sendError(res, { status: 401, message: 'Incorrect API key provided.', code: 'invalid_api_key', type: 'invalid_request_error' });
      }
      if (record.method === 'POST' && record.path.endsWith('/chat/completions')) return await this.chat(record, res);
      if (record.method === 'POST' && record.path.endsWith('/embeddings')) return await this.embeddings(record, res);
      if (record.method === 'GET' && record.path.endsWith('/models')) {
        return this.sendJson(res, 200, { object: 'list', data: this.options.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' })) });
      }
      return this.sendError(res, { status: 404, message: `Unknown route ${record.method} ${record.path}`, code: 'unknown_url' });
    } catch (err) {
      if (!res.headersSent) this.sendError(res, { status: 500, message: `fake server failure: ${(err as Error).message}` });
      else res.destroy();
    }
  }

  private sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  private sendError(res: ServerResponse, error: FakeError): void {
    const headers: Record<string, string> = { ...error.headers };
    if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter);
    if (error.retryAfterMs !== undefined) headers['retry-after-ms'] = String(error.retryAfterMs);
    this.sendJson(res, error.status, { error: { message: error.message ?? `HTTP ${error.status}`, type: error.type ?? 'error', param: null, code: error.code ?? null } }, headers);
  }

  // === /chat/completions

  private async chat(record: RecordedRequest, res: ServerResponse): Promise<void> {
    let reply = (this.queues.chat.shift() as FakeChatReply | undefined) ?? this.defaultReply;
    while (typeof reply === 'function') reply = await reply(record);
    if ('hang' in reply) return; // the response stays open until the client (or close()) ends it
    if (reply.delayMs) await this.wait(reply.delayMs);
    if (res.destroyed) return;
    if ('error' in reply) return this.sendError(res, reply.error);
    if ('garbage' in reply) return this.sendGarbage(res, reply.garbage, !!record.body?.stream);

    const body = record.body ?? {};
    const model = reply.model ?? body.model ?? 'fake-model';
    const id = `chatcmpl-fake-${record.seq}`;
    const created = Math.floor(Date.now() / 1000);
    const nativeCalls = 'toolCalls' in reply && reply.mode !== 'text' ? reply.toolCalls : [];
    let text = reply.text ?? '';
    if ('toolCalls' in reply && reply.mode === 'text') {
      const block = JSON.stringify({
        tool_calls: reply.toolCalls.map((c) => ({ ...(c.id ? { id: c.id } : {}), name: c.name, arguments: typeof c.arguments === 'string' ? parseOrRaw(c.arguments) : (c.arguments ?? {}) })),
      });
      text = text ? `${text}\n${block}` : block;
    }
    const calls = nativeCalls.map((c, i) => ({
      id: c.id ?? `call_fake_${record.seq}_${i}`,
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
    }));
    const finishReason = 'finishReason' in reply && reply.finishReason ? reply.finishReason : calls.length ? 'tool_calls' : 'stop';
    const usage =
      reply.usage === null
        ? null
        : {
            prompt_tokens: reply.usage?.prompt_tokens ?? approxTokens(body.messages),
            completion_tokens: reply.usage?.completion_tokens ?? approxTokens(text + calls.map((c) => c.name + c.arguments).join('')),
            ...(reply.usage?.cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens: reply.usage.cached_tokens } } : {}),
          };
    const withTotal = usage ? { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } : undefined;
    const reasoning = 'reasoning' in reply ? reply.reasoning : undefined;

    if (!body.stream) {
      const message: Record<string, unknown> = { role: 'assistant', content: text || (calls.length ? null : '') };
      if (reasoning) message.reasoning_content = reasoning;
      if (calls.length) message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
      return this.sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
        ...(withTotal ? { usage: withTotal } : {}),
      });
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const chunkDelay = reply.chunkDelayMs ?? this.options.chunkDelayMs;
    const pieces = reply.chunks ?? this.options.chunks;
    const send = (data: unknown): void => {
      if (!res.destroyed) res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    };
    const chunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    });
    let first = true;
    const step = async (delta: Record<string, unknown>): Promise<boolean> => {
      if (!first) await this.wait(chunkDelay);
      if (res.destroyed) return false;
      send(chunk(first ? { role: 'assistant', ...delta } : delta));
      if (first) record.firstChunkAt = now();
      first = false;
      return true;
    };

    if (reasoning) for (const piece of split(reasoning, pieces)) if (!(await step({ reasoning_content: piece }))) return;
    const cut = 'cut' in reply ? reply.cut : undefined;
    for (const [i, piece] of split(text, pieces).entries()) {
      if (cut && i === cut.afterChunks) {
        if (cut.how === 'destroy') res.socket?.destroy();
        else res.end();
        return;
      }
      if (!(await step({ content: piece }))) return;
    }
    for (const [index, call] of calls.entries()) {
      if (!(await step({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }))) return;
      for (const piece of split(call.arguments, 2)) if (!(await step({ tool_calls: [{ index, function: { arguments: piece } }] }))) return;
    }
    if ('hangAfterText' in reply && reply.hangAfterText) return;
    if ('streamError' in reply && reply.streamError) {
      send({ error: { message: reply.streamError.message, code: reply.streamError.code ?? null, type: 'server_error' } });
      res.end();
      return;
    }
    if (first) send(chunk({ role: 'assistant', content: '' }));
    send(chunk({}, finishReason));
    if (withTotal && body.stream_options?.include_usage) send({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: withTotal });
    send('[DONE]');
    res.end();
  }

  private sendGarbage(res: ServerResponse, kind: FakeGarbage, stream: boolean): void {
    if (kind === 'html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body><h1>Welcome to nginx!</h1></body></html>\n');
      return;
    }
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(kind === 'wrong-shape' ? JSON.stringify({ result: 'ok', output: 'not a completion' }) : '{"id": "chatcmpl-broken", "choices": [{"message": ');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (kind === 'not-json') res.write('data: {"id": "chatcmpl-broken", "choices": [{"delta": {"content": "Hel\n\n');
    if (kind === 'wrong-shape') res.write(`data: ${JSON.stringify({ result: 'ok', output: 'not a chunk' })}\n\ndata: [DONE]\n\n`);
    if (kind === 'invalid-sse') res.write('{"choices":[{"index":0,"delta":{"content":"raw JSON, no data: prefix"}}]}\n\nevent: ping\nretry: nonsense\n\n');
    res.end();
  }

  // === /embeddings

  private async embeddings(record: RecordedRequest, res: ServerResponse): Promise<void> {
    const reply = this.queues.embeddings.shift() as FakeEmbeddingsReply | undefined;
    if (reply && 'hang' in reply) return;
    if (reply && 'error' in reply) {
      if (reply.delayMs) await this.wait(reply.delayMs);
      return this.sendError(res, reply.error);
    }
    const body = record.body ?? {};
    const inputs = body.input === undefined ? [] : Array.isArray(body.input) ? body.input : [body.input];
    const vectors = reply && 'vectors' in reply ? reply.vectors : inputs.map((t) => fakeEmbedding(String(t), this.options.embeddingDimension));
    const encoding = (reply && 'encoding' in reply ? reply.encoding : undefined) ?? this.options.forceEmbeddingEncoding ?? (body.encoding_format === 'base64' ? 'base64' : 'float');
    this.sendJson(res, 200, {
      object: 'list',
      model: body.model ?? 'fake-embedding',
      data: vectors.map((v, index) => ({ object: 'embedding', index, embedding: encoding === 'base64' ? toBase64(v) : v })),
      usage: { prompt_tokens: approxTokens(inputs), total_tokens: approxTokens(inputs) },
    });
  }
}
