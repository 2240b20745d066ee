import { chunkText } from '../../../server/modules/memory';
import { estimateTokens } from '../../../server/modules/models';

const opts = (chunkTokens: number, overlapTokens: number) => ({ chunkTokens, overlapTokens, estimate: estimateTokens });

describe('chunkText (workspace files)', () => {
  it('keeps a short file in one chunk, trimmed', () => {
    expect(chunkText('\n# Notes\n\nI like tea.\n\n', opts(400, 80))).toEqual(['# Notes\n\nI like tea.']);
    expect(chunkText('   \n\n', opts(400, 80))).toEqual([]);
  });

  it('packs lines into chunks of at most chunk_tokens, each starting with the overlap of the one before', () => {
    const lines = Array.from({ length: 120 }, (_, i) => `Line ${i}: the quick brown fox number ${i} jumps.`);
    const chunks = chunkText(lines.join('\n'), opts(100, 20));
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(estimateTokens(c)).toBeLessThanOrEqual(100);
    // Every line is in some chunk, in order; consecutive chunks share their boundary lines.
    for (const line of lines) expect(chunks.some((c) => c.includes(line))).toBe(true);
    for (let i = 1; i < chunks.length; i++) {
      const firstLine = chunks[i]!.split('\n')[0]!;
      expect(chunks[i - 1]).toContain(firstLine);
    }
  });

  it('without overlap, chunks do not repeat lines', () => {
    const lines = Array.from({ length: 60 }, (_, i) => `fact ${i} is about something.`);
    const chunks = chunkText(lines.join('\n'), opts(50, 0));
    expect(chunks.join('\n').split('\n').filter((l) => l.startsWith('fact'))).toEqual(lines);
  });

  it('splits a line longer than a chunk at words, and a huge word by characters', () => {
    const long = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    const chunks = chunkText(long, opts(60, 10));
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) expect(estimateTokens(c)).toBeLessThanOrEqual(60);
    const blob = 'x'.repeat(5000);
    const parts = chunkText(blob, opts(60, 0));
    expect(parts.join('')).toBe(blob);
    for (const p of parts) expect(estimateTokens(p)).toBeLessThanOrEqual(60);
  });

  it('caps the overlap at half a chunk', () => {
    const lines = Array.from({ length: 40 }, (_, i) => `entry ${i} with some words`);
    const chunks = chunkText(lines.join('\n'), opts(40, 1000));
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.length).toBeLessThan(40);
  });
});
