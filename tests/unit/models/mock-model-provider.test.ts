import {
  ContextLengthError,
  MockModelProvider,
  ModelApiError,
  ModelTransportError,
  classifyModelError,
  mockReplyText,
  splitIntoChunks,
  type ChatRequest,
} from '../../../server/modules/models';

const req = (text: string): ChatRequest => ({ model: 'mock-1', messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: text }] });

describe('MockModelProvider', () => {
  it('answers "Mock reply: <last user message>" in a few ordered deltas, with estimated usage', async () => {
    const mock = new MockModelProvider();
    const deltas: string[] = [];
    const result = await mock.chat(req('what is the weather like today'), { onDelta: (t) => deltas.push(t) });
    expect(result.text).toBe('Mock reply: what is the weather like today');
    expect(deltas.length).toBe(3);
    expect(deltas.join('')).toBe(result.text);
    expect(result).toMatchObject({ finishReason: 'stop', provider: 'mock', model: 'mock-1', toolCalls: [] });
    expect(result.usage.estimated).toBe(true);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(mock.requests).toHaveLength(1);
  });

  it('is deterministic', async () => {
    const a = await new MockModelProvider().chat(req('same'));
    const b = await new MockModelProvider().chat(req('same'));
    expect(a).toEqual(b);
  });

  it('plays a script in order, then falls back to the default', async () => {
    const mock = new MockModelProvider().enqueue(
      { toolCalls: [{ name: 'current_time', arguments: { tz: 'UTC' } }, { id: 'fixed', name: 'web_search', arguments: '{"q":"x"}' }] },
      { text: 'It is noon.' },
      (r) => ({ text: `saw ${r.messages.length} messages` }),
    );
    expect(mock.pending).toBe(3);
    const first = await mock.chat(req('time?'));
    expect(first.finishReason).toBe('tool_calls');
    expect(first.toolCalls).toEqual([
      { id: 'call_mock_1_0', name: 'current_time', arguments: '{"tz":"UTC"}' },
      { id: 'fixed', name: 'web_search', arguments: '{"q":"x"}' },
    ]);
    expect((await mock.chat(req('x'))).text).toBe('It is noon.');
    expect((await mock.chat(req('x'))).text).toBe('saw 2 messages');
    expect((await mock.chat(req('back to default'))).text).toBe('Mock reply: back to default');
    expect(mock.pending).toBe(0);
  });

  it('throws scripted errors as the matching model errors', async () => {
    const custom = new Error('custom');
    const mock = new MockModelProvider().enqueue(
      { error: 'rate-limit', retryAfterMs: 250 },
      { error: 'server' },
      { error: 'transport' },
      { error: 'context-length' },
      { error: 'bad-request' },
      { error: custom },
    );
    const errors = [];
    for (let i = 0; i < 6; i++) errors.push(await mock.chat(req('x')).catch((e: unknown) => e));
    expect(errors[0]).toBeInstanceOf(ModelApiError);
    expect(errors[0]).toMatchObject({ status: 429, retryAfterMs: 250 });
    expect(errors.map((e) => classifyModelError(e))).toEqual(['rate-limit', 'retry', 'retry', 'context-length', 'fatal', 'fatal']);
    expect(errors[2]).toBeInstanceOf(ModelTransportError);
    expect(errors[3]).toBeInstanceOf(ContextLengthError);
    expect(errors[5]).toBe(custom);
  });

  it('honours abort before and during a reply', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(new MockModelProvider().chat(req('x'), { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });

    const slow = new MockModelProvider({ chunkDelayMs: 50 });
    const c2 = new AbortController();
    const deltas: string[] = [];
    const started = Date.now();
    const call = slow.chat(req('one two three four five six'), {
      signal: c2.signal,
      onDelta: (t) => {
        deltas.push(t);
        c2.abort();
      },
    });
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(deltas).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(500);

    const delayed = new MockModelProvider().enqueue({ text: 'late', delayMs: 10_000 });
    const c3 = new AbortController();
    const pending = delayed.chat(req('x'), { signal: c3.signal });
    setTimeout(() => c3.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('embeds deterministically into unit vectors of a fixed dimension', async () => {
    const mock = new MockModelProvider();
    const [a, b, c, d, empty] = await mock.embed([
      'ravens fly north in winter',
      'ravens fly north in winter',
      'ravens fly south in summer',
      'quarterly tax report spreadsheet',
      '',
    ]);
    expect(a).toHaveLength(64);
    expect(a).toEqual(b);
    for (const v of [a, c, d, empty]) expect(Math.hypot(...v!)).toBeCloseTo(1, 10);
    const cos = (x: number[], y: number[]) => x.reduce((s, xi, i) => s + xi * y[i]!, 0);
    // Texts sharing words are closer than unrelated ones.
    expect(cos(a!, c!)).toBeGreaterThan(cos(a!, d!));
    expect(await new MockModelProvider({ embeddingDimension: 16 }).embed(['x'])).toEqual([expect.any(Array)]);
    expect((await new MockModelProvider({ embeddingDimension: 16 }).embed(['x']))[0]).toHaveLength(16);
  });

  it('describes itself and pings', async () => {
    const mock = new MockModelProvider({ name: 'scripted', contextWindow: 2048, maxConcurrency: 2 });
    expect(mock).toMatchObject({ name: 'scripted', contextWindow: 2048, maxConcurrency: 2, supportsTools: true, supportsVision: true });
    await expect(mock.ping()).resolves.toBeUndefined();
  });
});

describe('mock helpers', () => {
  it('mockReplyText uses the last user message, text parts only', () => {
    expect(mockReplyText([{ role: 'user', content: 'first' }, { role: 'assistant', content: 'a' }, { role: 'user', content: 'second' }])).toBe('Mock reply: second');
    expect(mockReplyText([{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', mimeType: 'image/png', dataBase64: 'AA==' }] }])).toBe(
      'Mock reply: look\n[image (image/png) omitted: this model cannot see images]',
    );
    expect(mockReplyText([{ role: 'system', content: 'x' }])).toBe('Mock reply: (no user message)');
  });

  it('splitIntoChunks keeps the text intact', () => {
    expect(splitIntoChunks('', 3)).toEqual([]);
    expect(splitIntoChunks('one', 3)).toEqual(['one']);
    const text = 'a b c d e f g';
    const pieces = splitIntoChunks(text, 3);
    expect(pieces).toHaveLength(3);
    expect(pieces.join('')).toBe(text);
  });
});
