import { newId } from '../../../server/common/ids';

describe('newId', () => {
  it('gives UUIDv7 strings that increase and never repeat, across many draws of the random pool', () => {
    const seen = new Set<string>();
    let previous = '';
    for (let i = 0; i < 5000; i++) {
      const id = newId();
      expect(id > previous).toBe(true);
      previous = id;
      seen.add(id);
    }
    expect(seen.size).toBe(5000);
    expect(previous).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('puts the time first, so ids sort by creation time', () => {
    const at = Date.UTC(2030, 0, 2, 3, 4, 5, 678);
    const id = newId(at + 1000);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBeGreaterThanOrEqual(at + 1000);
    // The random parts differ between ids of the same millisecond.
    const a = newId(at + 1000);
    const b = newId(at + 1000);
    expect(a.slice(19)).not.toBe(b.slice(19));
  });
});
