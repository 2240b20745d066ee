import net from 'node:net';
import {
  ContextLengthError,
  ModelApiError,
  ModelResponseError,
  ModelTransportError,
  OpenAICompatibleModelProvider,
  classifyModelError,
  type ChatMessage,
  type OpenAICompatibleModelProviderOptions,
} from '../../../server/modules/models';
import { FakeOpenAIServer, FakeReplies } from '../../support/fakes/fake-openai-server';

const KEY = 'sk-test-SECRET-abcdef123456';

async function unusedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

const user = (content: ChatMessage['content']): ChatMessage => ({ role: 'user', content });

describe('OpenAICompatibleModelProvider against the fake server', () => {
  let fake: FakeOpenAIServer;
  const make = (overrides: Partial<OpenAICompatibleModelProviderOptions> = {}): OpenAICompatibleModelProvider =>
    new OpenAICompatibleModelProvider({ name: 'fake', baseUrl: fake.baseUrl, apiKey: KEY, model: 'fake-model', timeoutMs: 10_000, ...overrides });

  beforeEach(async () => {
    fake = await FakeOpenAIServer.start({ apiKey: KEY });
  });
  afterEach(async () => {
    await fake.close();
  });

  // === Streaming

  it('streams deltas in order and the result text is their concatenation', async () => {
    fake.enqueue({ text: 'The quick brown fox jumps over the lazy dog.', chunks: 5, chunkDelayMs: 25 });
    const deltas: Array<{ text: string; at: number }> = [];
    const provider = make();
    const result = await provider.chat(
      { model: 'fake-model', messages: [{ role: 'system', content: 'Be brief.' }, user('Tell me about foxes')] },
      { onDelta: (text) => deltas.push({ text, at: Date.now() }) },
    );
    const finishedAt = Date.now();
    expect(deltas.length).toBe(5);
    expect(deltas.map((d) => d.text).join('')).toBe(result.text);
    expect(result.text).toBe('The quick brown fox jumps over the lazy dog.');
    // The first delta reached us while the model was still writing (4 gaps of 25 ms followed it).
    expect(finishedAt - deltas[0]!.at).toBeGreaterThanOrEqual(60);
    expect(result).toMatchObject({ finishReason: 'stop', model: 'fake-model', provider: 'fake' });

    const sent = fake.lastChatRequest()!;
    expect(sent.body).toMatchObject({
      model: 'fake-model',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Tell me about foxes' },
      ],
    });
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('assembles native tool calls from streamed fragments and sends tool schemas', async () => {
    fake.enqueue(
      FakeReplies.toolCalls([
        { id: 'call_a', name: 'current_time', arguments: { timezone: 'Europe/Berlin' } },
        { id: 'call_b', name: 'web_search', arguments: '{"query":"ravens in norse myth","limit":3}' },
      ]),
    );
    const result = await make().chat({
      model: 'fake-model',
      messages: [user('time and ravens?')],
      tools: [{ name: 'current_time', description: 'Current time', parameters: { type: 'object', properties: { timezone: { type: 'string' } } } }],
    });
    expect(result.finishReason).toBe('tool_calls');
    expect(result.text).toBe('');
    expect(result.toolCalls).toEqual([
      { id: 'call_a', name: 'current_time', arguments: '{"timezone":"Europe/Berlin"}' },
      { id: 'call_b', name: 'web_search', arguments: '{"query":"ravens in norse myth","limit":3}' },
    ]);
    expect(fake.lastChatRequest()!.body!.tools).toEqual([
      { type: 'function', function: { name: 'current_time', description: 'Current time', parameters: { type: 'object', properties: { timezone: { type: 'string' } } } } },
    ]);
  });

  it('passes tool calls written as JSON text through as text (the agent loop parses them)', async () => {
    fake.enqueue(FakeReplies.textToolCalls([{ name: 'current_time', arguments: {} }]));
    const result = await make({ supportsTools: false }).chat({
      model: 'fake-model',
      messages: [user('time?')],
      tools: [{ name: 'current_time', description: 'Current time', parameters: { type: 'object' } }],
    });
    expect(result.toolCalls).toEqual([]);
    expect(JSON.parse(result.text)).toEqual({ tool_calls: [{ name: 'current_time', arguments: {} }] });
    // A model without native tools is not sent `tools`.
    expect(fake.lastChatRequest()!.body!.tools).toBeUndefined();
  });

  it('maps tool-call history: native for tool models, text for the others', async () => {
    const messages: ChatMessage[] = [
      user('what time is it?'),
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'current_time', arguments: '{}' }] },
      { role: 'tool', content: '12:00', toolCallId: 'call_1', name: 'current_time' },
    ];
    await make().chat({ model: 'fake-model', messages });
    expect(fake.lastChatRequest()!.body!.messages!.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'current_time', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '12:00' },
    ]);

    await make({ supportsTools: false }).chat({ model: 'fake-model', messages });
    const plain = fake.lastChatRequest()!.body!.messages!.slice(1);
    expect(plain[0]).toEqual({ role: 'assistant', content: '{"tool_calls":[{"id":"call_1","name":"current_time","arguments":{}}]}' });
    expect(plain[1]).toEqual({ role: 'user', content: 'Result of tool current_time (call call_1):\n12:00' });
  });

  it('sends images as data URLs to vision models and as a note to the others', async () => {
    const content: ChatMessage['content'] = [
      { type: 'text', text: 'What is this?' },
      { type: 'image', mimeType: 'image/png', dataBase64: 'iVBORw0KGgo=' },
    ];
    await make({ supportsVision: true }).chat({ model: 'fake-model', messages: [user(content)] });
    expect(fake.lastChatRequest()!.body!.messages![0]!.content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ]);
    await make({ supportsVision: false }).chat({ model: 'fake-model', messages: [user(content)] });
    expect(fake.lastChatRequest()!.body!.messages![0]!.content).toBe('What is this?\n[image (image/png) omitted: this model cannot see images]');
  });

  it('sends temperature and the output limit under the preset’s field name', async () => {
    await make().chat({ model: 'fake-model', messages: [user('hi')], temperature: 0.2, maxTokens: 99 });
    expect(fake.lastChatRequest()!.body).toMatchObject({ temperature: 0.2, max_tokens: 99 });
    await make({ maxTokensParam: 'max_completion_tokens' }).chat({ model: 'fake-model', messages: [user('hi')], maxTokens: 99 });
    expect(fake.lastChatRequest()!.body).toMatchObject({ max_completion_tokens: 99 });
    expect(fake.lastChatRequest()!.body!.max_tokens).toBeUndefined();
  });

  it('works without streaming too (one JSON body, one delta)', async () => {
    fake.enqueue({ text: 'whole answer', usage: { prompt_tokens: 11, completion_tokens: 2 } });
    const deltas: string[] = [];
    const result = await make({ stream: false }).chat({ model: 'fake-model', messages: [user('hi')] }, { onDelta: (t) => deltas.push(t) });
    expect(result.text).toBe('whole answer');
    expect(deltas).toEqual(['whole answer']);
    expect(result.usage).toEqual({ inputTokens: 11, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: false });
    expect(fake.lastChatRequest()!.body!.stream).toBe(false);
  });

  it('keeps streamed reasoning out of the text', async () => {
    fake.enqueue({ text: 'Answer.', reasoning: 'Let me think about it.' });
    const result = await make().chat({ model: 'fake-model', messages: [user('hi')] });
    expect(result.text).toBe('Answer.');
    expect(result.reasoning).toBe('Let me think about it.');
  });

  // === Usage

  it('maps provider usage including cached tokens', async () => {
    fake.enqueue({ text: 'ok', usage: { prompt_tokens: 1200, completion_tokens: 7, cached_tokens: 1024 } });
    const result = await make().chat({ model: 'fake-model', messages: [user('hi')] });
    expect(result.usage).toEqual({ inputTokens: 1200, outputTokens: 7, cacheReadTokens: 1024, cacheWriteTokens: 0, estimated: false });
  });

  it('estimates usage and flags it when the provider reports none', async () => {
    fake.enqueue({ text: 'A reasonably long answer with several words in it.', usage: null });
    const result = await make().chat({ model: 'fake-model', messages: [{ role: 'system', content: 'You are a raven.' }, user('Say something long')] });
    expect(result.usage.estimated).toBe(true);
    expect(result.usage.inputTokens).toBeGreaterThan(8);
    expect(result.usage.outputTokens).toBeGreaterThanOrEqual(8);
    expect(result.usage.cacheReadTokens).toBe(0);
  });

  // === Embeddings

  it('embeds with encoding_format float and keeps input order', async () => {
    const provider = make();
    const vectors = await provider.embed(['alpha', 'beta', 'gamma'], { model: 'embed-small' });
    expect(vectors).toHaveLength(3);
    expect(vectors[0]).toHaveLength(8);
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: 'embed-small', input: ['alpha', 'beta', 'gamma'], encoding_format: 'float' });
    const again = await provider.embed(['gamma', 'alpha']);
    expect(again[0]).toEqual(vectors[2]);
    expect(again[1]).toEqual(vectors[0]);
    expect(fake.requests.at(-1)!.body!.model).toBe('fake-model');
    await expect(provider.embed([])).resolves.toEqual([]);
  });

  it('tells the input tokens the server reported for an embeddings call', async () => {
    const told: number[] = [];
    await make().embed(['alpha', 'beta'], { onUsage: (tokens) => told.push(tokens) });
    // The fake reports ceil(length of the JSON input / 4): '["alpha","beta"]' is 16 characters.
    expect(told).toEqual([4]);
  });

  it('prepare loads the client and runs its request path without sending anything; calls work as before', async () => {
    const provider = make();
    provider.prepare();
    expect(await provider.embed(['alpha'])).toHaveLength(1);
    // Only the real call reached the server (the dry run, started first, is answered by its own fetch).
    expect(fake.requests.map((r) => r.body)).toEqual([expect.objectContaining({ input: ['alpha'] })]);
  });

  it('decodes base64 embeddings from a server that ignores encoding_format', async () => {
    const floats = await make().embed(['alpha', 'beta']);
    fake.enqueueEmbeddings({ encoding: 'base64' });
    const decoded = await make().embed(['alpha', 'beta']);
    expect(decoded).toHaveLength(2);
    decoded.forEach((vector, i) => vector.forEach((x, j) => expect(x).toBeCloseTo(floats[i]![j]!, 5)));
  });

  // === Errors

  it('429 becomes ModelApiError with retryAfterMs from Retry-After, classified rate-limit', async () => {
    fake.enqueue(FakeReplies.rateLimited(2));
    const err = await make().chat({ model: 'fake-model', messages: [user('hi')] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelApiError);
    expect(err).toMatchObject({ status: 429, retryAfterMs: 2000, providerCode: 'rate_limit_exceeded', provider: 'fake', model: 'fake-model' });
    expect(classifyModelError(err)).toBe('rate-limit');
    expect((err as Error).message).toContain('Rate limit reached');
  });

  it('prefers retry-after-ms and understands HTTP dates', async () => {
    fake.enqueue({ error: { status: 429, retryAfter: 30, retryAfterMs: 1500 } });
    await expect(make().chat({ model: 'fake-model', messages: [user('hi')] })).rejects.toMatchObject({ retryAfterMs: 1500 });
    fake.enqueue({ error: { status: 429, retryAfter: new Date(Date.now() + 60_000).toUTCString() } });
    const err = (await make().chat({ model: 'fake-model', messages: [user('hi')] }).catch((e: unknown) => e)) as ModelApiError;
    expect(err.retryAfterMs).toBeGreaterThan(55_000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('500 becomes ModelApiError classified retry; 401 is fatal', async () => {
    fake.enqueue(FakeReplies.serverError(500), FakeReplies.serverError(503));
    for (const status of [500, 503]) {
      const err = await make().chat({ model: 'fake-model', messages: [user('hi')] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ModelApiError);
      expect((err as ModelApiError).status).toBe(status);
      expect(classifyModelError(err)).toBe('retry');
    }
    const unauthorized = await make({ apiKey: 'sk-wrong-key-0000000000' }).chat({ model: 'fake-model', messages: [user('hi')] }).catch((e: unknown) => e);
    expect(unauthorized).toMatchObject({ status: 401, providerCode: 'invalid_api_key' });
    expect(classifyModelError(unauthorized)).toBe('fatal');
  });

  it('context_length_exceeded becomes ContextLengthError', async () => {
    fake.enqueue(FakeReplies.contextLength(4096));
    const err = await make().chat({ model: 'fake-model', messages: [user('a very long prompt')] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextLengthError);
    expect(err).toMatchObject({ status: 400, providerCode: 'context_length_exceeded' });
    expect(classifyModelError(err)).toBe('context-length');
  });

  it('an error inside the stream becomes a retryable ModelApiError', async () => {
    fake.enqueue({ text: 'partial', streamError: { message: 'upstream overloaded' } });
    const err = await make().chat({ model: 'fake-model', messages: [user('hi')] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelApiError);
    expect((err as Error).message).toContain('upstream overloaded');
    expect(classifyModelError(err)).toBe('retry');
  });

  it('an unreachable port becomes ModelTransportError, classified retry', async () => {
    const port = await unusedPort();
    const provider = make({ baseUrl: `http://127.0.0.1:${port}/v1` });
    const err = await provider.chat({ model: 'm', messages: [user('hi')] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelTransportError);
    expect((err as Error).message).toContain(`127.0.0.1:${port}`);
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
    expect(classifyModelError(err)).toBe('retry');
    await expect(provider.ping()).rejects.toBeInstanceOf(ModelTransportError);
    await expect(provider.embed(['x'])).rejects.toBeInstanceOf(ModelTransportError);
  });

  it('a call that exceeds timeoutMs becomes ModelTransportError', async () => {
    fake.enqueue(FakeReplies.hang());
    const started = Date.now();
    const err = await make({ timeoutMs: 300 }).chat({ model: 'fake-model', messages: [user('hi')] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelTransportError);
    expect((err as Error).message).toContain('300 ms');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a malformed body becomes ModelResponseError naming the field', async () => {
    fake.enqueue((req) => {
      void req;
      return { text: 'x', usage: null, model: 42 as unknown as string };
    });
    const err = await make().chat({ model: 'fake-model', messages: [user('hi')] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelResponseError);
    expect((err as Error).message).toContain('chunk.model is number, expected a string');
    expect(classifyModelError(err)).toBe('retry');
  });

  // === Aborts

  it('aborting mid-stream rejects promptly with an AbortError and closes the request', async () => {
    fake.enqueue({ text: 'first part of a long answer', chunks: 2, hangAfterText: true });
    const controller = new AbortController();
    const deltas: string[] = [];
    let abortedAt = 0;
    const call = make().chat(
      { model: 'fake-model', messages: [user('hi')] },
      {
        signal: controller.signal,
        onDelta: (t) => {
          deltas.push(t);
          if (deltas.length === 2) {
            abortedAt = Date.now();
            controller.abort();
          }
        },
      },
    );
    const err = await call.catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(classifyModelError(err)).toBe('fatal');
    expect(Date.now() - abortedAt).toBeLessThan(500);
    const [req] = await fake.waitForRequests(1, { pathSuffix: '/chat/completions', ended: true });
    expect(req!.aborted).toBe(true);
  });

  it('aborting while waiting for headers rejects promptly', async () => {
    fake.enqueue(FakeReplies.hang());
    const controller = new AbortController();
    const call = make().chat({ model: 'fake-model', messages: [user('hi')] }, { signal: controller.signal });
    await fake.waitForRequests(1, { pathSuffix: '/chat/completions' });
    const started = Date.now();
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(500);
    await expect(make().chat({ model: 'fake-model', messages: [user('hi')] }, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('an error thrown by onDelta reaches the caller unchanged', async () => {
    const boom = new Error('subscriber failed');
    await expect(
      make().chat({ model: 'fake-model', messages: [user('hi')] }, {
        onDelta: () => {
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
  });

  // === Credentials

  it('sends the key as Bearer but never puts it in error messages', async () => {
    fake.enqueue({ error: { status: 400, message: `Invalid request for key ${KEY}` } }, FakeReplies.serverError());
    for (let i = 0; i < 2; i++) {
      const err = (await make().chat({ model: 'fake-model', messages: [user('hi')] }).catch((e: unknown) => e)) as Error;
      expect(err.message).not.toContain(KEY);
      expect(JSON.stringify(err)).not.toContain(KEY);
    }
    expect(fake.chatRequests().every((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    const port = await unusedPort();
    const err = (await make({ baseUrl: `http://127.0.0.1:${port}/v1` }).chat({ model: 'm', messages: [user('hi')] }).catch((e: unknown) => e)) as Error;
    expect(`${err.message} ${String(err.stack)}`).not.toContain(KEY);
  });

  it('sends no Authorization header when there is no key', async () => {
    const open = await FakeOpenAIServer.start();
    try {
      const provider = new OpenAICompatibleModelProvider({ name: 'local', baseUrl: open.baseUrl });
      await provider.chat({ model: 'fake-model', messages: [user('hi')] });
      await provider.ping();
      expect(open.requests.map((r) => r.headers.authorization)).toEqual([undefined, undefined]);
    } finally {
      await open.close();
    }
  });

  it('ping lists models; listModels returns them', async () => {
    await expect(make().ping()).resolves.toBeUndefined();
    await expect(make().listModels()).resolves.toEqual(['fake-model']);
  });

  it('the fake records start and end times so overlap can be checked', async () => {
    fake.enqueue({ text: 'one', delayMs: 80 }, { text: 'two', delayMs: 80 });
    const provider = make();
    await Promise.all([provider.chat({ model: 'fake-model', messages: [user('1')] }), provider.chat({ model: 'fake-model', messages: [user('2')] })]);
    const [a, b] = fake.chatRequests();
    expect(a!.endedAt).not.toBeNull();
    // Both ran at once: each started before the other ended.
    expect(a!.startedAt).toBeLessThan(b!.endedAt!);
    expect(b!.startedAt).toBeLessThan(a!.endedAt!);
  });
});
