import { MAX_CANDIDATES, parseMemoryCandidates } from '../../../server/modules/summarizer';

describe('parseMemoryCandidates', () => {
  it('reads {"memories": […]} and normalizes types, content and importance', () => {
    const parsed = parseMemoryCandidates(
      JSON.stringify({
        memories: [
          { type: 'fact', content: '  Likes   tea. ', importance: 0.7 },
          { type: 'Lesson', content: 'Prefers short answers.', importance: '0.4' },
          { type: 'todo', content: 'Call Bob on Friday.', importance: 8 },
          { type: 'preference', text: 'Uses vim.' },
        ],
      }),
    );
    expect(parsed).toEqual({
      ok: true,
      skipped: 0,
      memories: [
        { type: 'fact', content: 'Likes tea.', importance: 0.7 },
        { type: 'lesson', content: 'Prefers short answers.', importance: 0.4 },
        { type: 'reminder', content: 'Call Bob on Friday.', importance: 0.8 },
        { type: 'fact', content: 'Uses vim.', importance: 0.5 },
      ],
    });
  });

  it('finds JSON inside code fences or prose, bare lists and lists grouped by type', () => {
    expect(parseMemoryCandidates('Here you go:\n```json\n[{"type":"fact","content":"A"}]\n```\nDone.')).toMatchObject({ ok: true, memories: [{ content: 'A' }] });
    expect(parseMemoryCandidates('Sure. {"memories":[{"type":"reminder","content":"B"}]} Anything else?')).toMatchObject({ ok: true, memories: [{ type: 'reminder', content: 'B' }] });
    expect(parseMemoryCandidates('{"facts":["C"],"lessons":[{"content":"D"}]}')).toMatchObject({
      ok: true,
      memories: [
        { type: 'fact', content: 'C' },
        { type: 'lesson', content: 'D' },
      ],
    });
    expect(parseMemoryCandidates('{"memories":[]}')).toEqual({ ok: true, memories: [], skipped: 0 });
  });

  it('skips invalid items, duplicates and everything past the cap', () => {
    const items = [
      { type: 'fact', content: 'same' },
      { type: 'fact', content: 'SAME' },
      { type: 'gossip', content: 'unknown type' },
      { type: 'fact', content: '' },
      { type: 'fact' },
      42,
      ...Array.from({ length: MAX_CANDIDATES + 3 }, (_, i) => ({ type: 'fact', content: `item ${i}` })),
    ];
    const parsed = parseMemoryCandidates(JSON.stringify({ memories: items }));
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.memories).toHaveLength(MAX_CANDIDATES);
    expect(parsed.memories[0]!.content).toBe('same');
    expect(parsed.skipped).toBe(items.length - MAX_CANDIDATES);
  });

  it('reports, never throws, when there is nothing usable', () => {
    expect(parseMemoryCandidates('I cannot help with that.')).toEqual({ ok: false, error: 'no JSON in the answer' });
    expect(parseMemoryCandidates('{"memories": [unterminated')).toEqual({ ok: false, error: 'no JSON in the answer' });
    expect(parseMemoryCandidates('{"answer": 42}')).toEqual({ ok: false, error: 'the JSON has no list of memories' });
    expect(parseMemoryCandidates('')).toMatchObject({ ok: false });
  });

  it('cuts very long memories at a word boundary', () => {
    const parsed = parseMemoryCandidates(JSON.stringify([{ type: 'fact', content: 'word '.repeat(400) }]));
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.memories[0]!.content.length).toBeLessThanOrEqual(1001);
    expect(parsed.memories[0]!.content.endsWith('word…')).toBe(true);
  });
});
