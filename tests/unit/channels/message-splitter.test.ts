import { splitMessage } from '../../../server/channels/message-splitter';

describe('splitMessage', () => {
  it('leaves short text alone', () => {
    expect(splitMessage('hello', 4096)).toEqual(['hello']);
  });

  it('splits long prose at paragraph breaks, every chunk within the limit, nothing lost', () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) => `Paragraph ${i}: ${'word '.repeat(40).trim()}`);
    const text = paragraphs.join('\n\n');
    const chunks = splitMessage(text, 1000);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(1000);
      expect(c.startsWith('\n')).toBe(false);
    }
    expect(chunks.join('\n\n').replace(/\s+/g, ' ')).toBe(text.replace(/\s+/g, ' '));
    // Splits fall between paragraphs, not inside them.
    for (const c of chunks) expect(c.trim().startsWith('Paragraph')).toBe(true);
  });

  it('never leaves a code block open: it is closed and reopened with its language', () => {
    const code = Array.from({ length: 200 }, (_, i) => `const line${i} = ${i};`).join('\n');
    const text = `Here is the code:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nDone.`;
    const chunks = splitMessage(text, 1500);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(1500);
      const fences = c.split('\n').filter((l) => l.trim().startsWith('```')).length;
      expect(fences % 2).toBe(0);
    }
    expect(chunks[1]!.startsWith('```ts\n')).toBe(true);
    const lines = chunks.join('\n').split('\n').filter((l) => l.startsWith('const line'));
    expect(lines).toEqual(code.split('\n'));
  });

  it('splits a 6000-character reply for Telegram into two chunks', () => {
    const text = 'x'.repeat(2999) + ' ' + 'y'.repeat(3000);
    const chunks = splitMessage(text, 4096);
    expect(chunks).toHaveLength(2);
    expect(chunks.join(' ')).toBe(text);
  });
});
