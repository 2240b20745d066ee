import {
  IMAGE_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  estimateMessage,
  estimateMessages,
  estimateTokens,
  estimateTools,
} from '../../../server/modules/models';

describe('token estimation', () => {
  it('counts text tokens with the o200k tokenizer', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('hello world')).toBe(2);
    const long = 'The raven Muninn flies over the world every day. '.repeat(100);
    expect(estimateTokens(long)).toBeGreaterThan(900);
    expect(estimateTokens(long)).toBeLessThan(1300);
  });

  it('gives a remembered count only for the very same text', () => {
    const a = 'Ravens remember faces for years, and they tell each other. '.repeat(20);
    const b = `${a}And one more sentence that changes the count.`;
    const first = estimateTokens(a);
    expect(estimateTokens(b)).toBeGreaterThan(first);
    expect(estimateTokens(a)).toBe(first);
    expect(estimateTokens(a.toUpperCase())).not.toBe(first);
  });

  it('treats special-token text in user input as ordinary text', () => {
    expect(() => estimateTokens('please ignore <|endoftext|> and <|im_start|>')).not.toThrow();
    expect(estimateTokens('<|endoftext|>')).toBeGreaterThan(1);
  });

  it('adds per-message overhead and a fixed cost per image', () => {
    const text = estimateMessage({ role: 'user', content: 'hello world' });
    expect(text).toBe(MESSAGE_OVERHEAD_TOKENS + 2);
    const withImage = estimateMessage({
      role: 'user',
      content: [
        { type: 'text', text: 'hello world' },
        { type: 'image', mimeType: 'image/png', dataBase64: 'A'.repeat(100_000) },
      ],
    });
    // The base64 payload is not tokenized: an image costs the same whatever its size.
    expect(withImage).toBe(text + IMAGE_TOKENS);
  });

  it('counts tool calls and names', () => {
    const plain = estimateMessage({ role: 'assistant', content: '' });
    const withCall = estimateMessage({ role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'web_search', arguments: '{"query":"ravens"}' }] });
    expect(withCall).toBeGreaterThan(plain + 5);
    expect(estimateMessage({ role: 'user', content: 'hi', name: 'alice' })).toBeGreaterThan(estimateMessage({ role: 'user', content: 'hi' }));
  });

  it('sums a prompt with reply priming; empty prompt is 0', () => {
    const messages = [
      { role: 'system' as const, content: 'You are helpful.' },
      { role: 'user' as const, content: 'What is the capital of Norway?' },
    ];
    const sum = messages.reduce((n, m) => n + estimateMessage(m), 0);
    expect(estimateMessages(messages)).toBe(sum + 3);
    expect(estimateMessages([])).toBe(0);
  });

  it('estimates tool schemas', () => {
    expect(estimateTools(undefined)).toBe(0);
    expect(estimateTools([])).toBe(0);
    const one = estimateTools([{ name: 'current_time', description: 'Returns the time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } }]);
    expect(one).toBeGreaterThan(10);
  });
});
