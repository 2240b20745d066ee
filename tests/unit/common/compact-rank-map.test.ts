import { CompactRankMap } from '../../../server/common/compact-rank-map';

describe('CompactRankMap', () => {
  it('answers every key as the Map it was built from, and undefined for any other string', () => {
    const source = new Map<string, number>();
    for (let i = 0; i < 5000; i++) source.set(`w${i.toString(36)}${i % 7 ? '' : ' é🐦'}`, i * 3);
    source.set('', 99_999);
    source.set('\u0000', 1);
    const compact = new CompactRankMap(source);
    expect(compact.size).toBe(source.size);
    for (const [key, value] of source) expect(compact.get(key)).toBe(value);
    for (const miss of ['w', 'w0 ', 'x1', 'w1 é', '\u0000\u0000', 'W1', 'w1 é🐦x']) expect(compact.get(miss)).toBe(source.get(miss));
    expect(compact.has('w1')).toBe(true);
    expect(compact.has('nope')).toBe(false);
  });

  it('finds keys whose hashes collide in the table (linear probing)', () => {
    const keys = Array.from({ length: 64 }, (_, i) => String.fromCharCode(65 + i));
    const compact = new CompactRankMap(keys.map((k, i) => [k, i] as [string, number]));
    keys.forEach((k, i) => expect(compact.get(k)).toBe(i));
    expect(compact.get('AA')).toBeUndefined();
  });
});
