import {
  ToolCallAssembler,
  WireParseError,
  decodeBase64Embedding,
  parseChunk,
  parseCompletion,
  parseEmbeddings,
  parseModelList,
  parseUsage,
  toWireMessages,
} from '../../../server/modules/models/openai-compatible/wire';

const caps = { supportsTools: true, supportsVision: false };

describe('wire: requests', () => {
  it('sanitizes names and drops unusable ones', () => {
    const wire = toWireMessages(
      [
        { role: 'user', content: 'hi', name: 'Ada Lovelace (telegram)' },
        { role: 'user', content: 'hi', name: '☃☃' },
      ],
      caps,
    );
    expect(wire[0]).toEqual({ role: 'user', content: 'hi', name: 'Ada_Lovelace__telegram_' });
    expect(wire[1]).toEqual({ role: 'user', content: 'hi' });
  });

  it('joins text parts into a string when there is no image to send', () => {
    expect(toWireMessages([{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }], caps)[0]).toEqual({ role: 'user', content: 'a\nb' });
  });

  it('writes empty tool-call arguments as {}', () => {
    const [wire] = toWireMessages([{ role: 'assistant', content: 'ok', toolCalls: [{ id: 'c', name: 'n', arguments: '' }] }], caps);
    expect(wire).toEqual({ role: 'assistant', content: 'ok', tool_calls: [{ id: 'c', type: 'function', function: { name: 'n', arguments: '{}' } }] });
  });
});

describe('wire: streamed chunks', () => {
  it('reads content, reasoning, finish reason, usage and model', () => {
    expect(parseChunk({ model: 'm', choices: [{ index: 0, delta: { content: 'hi', reasoning_content: 'hmm' }, finish_reason: null }] })).toEqual({
      model: 'm',
      content: 'hi',
      reasoning: 'hmm',
      toolCalls: [],
      finishReason: undefined,
      usage: null,
    });
    expect(parseChunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } }).usage).toEqual({ inputTokens: 5, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(parseChunk({ choices: [{ index: 0, delta: {}, finish_reason: 'length' }] }).finishReason).toBe('length');
  });

  it('fails with the field path and the actual type', () => {
    expect(() => parseChunk('nope')).toThrow(new WireParseError('chunk is string, expected an object'));
    expect(() => parseChunk({ choices: {} })).toThrow('chunk.choices is object, expected an array');
    expect(() => parseChunk({ choices: [{ delta: { content: 5 } }] })).toThrow('chunk.choices[0].delta.content is number, expected a string');
    expect(() => parseChunk({ choices: [{ delta: { tool_calls: [{ index: '0' }] } }] })).toThrow('chunk.choices[0].delta.tool_calls[0].index is string, expected a number');
  });
});

describe('ToolCallAssembler', () => {
  it('groups fragments by index, in index order', () => {
    const a = new ToolCallAssembler();
    a.add({ index: 1, id: 'b', name: 'second', arguments: '' });
    a.add({ index: 0, id: 'a', name: 'first', arguments: '{"x"' });
    a.add({ index: 1, arguments: '{}' });
    a.add({ index: 0, arguments: ':1}' });
    expect(a.finish()).toEqual([
      { id: 'a', name: 'first', arguments: '{"x":1}' },
      { id: 'b', name: 'second', arguments: '{}' },
    ]);
  });

  it('copes with servers that omit index or repeat the name', () => {
    const a = new ToolCallAssembler();
    a.add({ index: undefined, id: 'x', name: 'lookup', arguments: '{"q":' });
    a.add({ index: undefined, name: 'lookup', arguments: '"ravens"}' });
    a.add({ index: undefined, id: 'y', name: 'time' });
    expect(a.finish()).toEqual([
      { id: 'x', name: 'lookup', arguments: '{"q":"ravens"}' },
      { id: 'y', name: 'time', arguments: '{}' },
    ]);
  });

  it('generates ids when missing and drops nameless fragments', () => {
    const a = new ToolCallAssembler();
    a.add({ index: 0, name: 'n', arguments: '{}' });
    a.add({ index: 3, arguments: 'junk' });
    const calls = a.finish();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.id).toMatch(/^call_[0-9a-f]{12}$/);
  });
});

describe('wire: completions, usage, embeddings, models', () => {
  it('parses a non-streamed completion with tool calls whose arguments are objects', () => {
    const parsed = parseCompletion({
      model: 'm',
      choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: { a: 1 } } }] }, finish_reason: 'tool_calls' }],
    });
    expect(parsed).toMatchObject({ model: 'm', text: '', finishReason: 'tool_calls', toolCalls: [{ id: 't', name: 'f', arguments: '{"a":1}' }], usage: null });
    expect(() => parseCompletion({ choices: [] })).toThrow('completion.choices is empty');
  });

  it('maps usage: cached reads and cache writes of several dialects', () => {
    expect(parseUsage({ prompt_tokens: 100, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 64, cache_write_tokens: 10 } })).toEqual({
      inputTokens: 100,
      outputTokens: 5,
      cacheReadTokens: 64,
      cacheWriteTokens: 10,
    });
    expect(parseUsage({ prompt_tokens: 100, completion_tokens: 5, cache_creation_input_tokens: 7 })?.cacheWriteTokens).toBe(7);
    expect(parseUsage(null)).toBeNull();
    expect(parseUsage({ total_tokens: 3 })).toBeNull();
    expect(() => parseUsage({ prompt_tokens: '3' })).toThrow('usage.prompt_tokens is string, expected a number');
  });

  it('decodes little-endian float32 base64 and orders embeddings by index', () => {
    const buf = Buffer.alloc(8);
    buf.writeFloatLE(0.5, 0);
    buf.writeFloatLE(-2, 4);
    expect(decodeBase64Embedding(buf.toString('base64'))).toEqual([0.5, -2]);
    expect(() => decodeBase64Embedding(Buffer.alloc(5).toString('base64'))).toThrow('expected a multiple of 4');
    const parsed = parseEmbeddings(
      {
        data: [
          { index: 1, embedding: buf.toString('base64') },
          { index: 0, embedding: [1, 2] },
        ],
      },
      2,
    );
    expect(parsed).toEqual([
      [1, 2],
      [0.5, -2],
    ]);
    expect(parseEmbeddings({ data: [{ index: 0, embedding: new Float32Array([0.25]) }] }, 1)).toEqual([[0.25]]);
    expect(() => parseEmbeddings({ data: [] }, 1)).toThrow('embeddings.data has 0 items, expected 1');
    expect(() => parseEmbeddings({ data: [{ embedding: {} }] }, 1)).toThrow('embeddings.data[0].embedding is object');
  });

  it('lists model ids', () => {
    expect(parseModelList({ data: [{ id: 'a' }, { id: 'b' }] })).toEqual(['a', 'b']);
    expect(() => parseModelList({ data: [{}] })).toThrow('models.data[0].id is missing');
  });
});
