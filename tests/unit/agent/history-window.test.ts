import { windowStart } from '../../../server/modules/agent/history';

describe('history window', () => {
  it('holds at most the limit and at least half of it, and its start moves in steps of half the limit', () => {
    const limit = 40;
    const starts = new Set<number>();
    for (let count = 0; count <= 500; count++) {
      const start = windowStart(count, limit);
      expect(count - start).toBeLessThanOrEqual(limit);
      if (count >= limit) expect(count - start).toBeGreaterThan(limit / 2);
      expect(start % (limit / 2)).toBe(0);
      starts.add(start);
    }
    // 500 messages, but the start changed only every 20 of them: consecutive turns mostly share a prefix.
    expect(starts.size).toBe(Math.ceil((500 - limit) / (limit / 2)) + 1);
    expect(windowStart(41, 40)).toBe(20);
    expect(windowStart(60, 40)).toBe(20);
    expect(windowStart(61, 40)).toBe(40);
  });
});
