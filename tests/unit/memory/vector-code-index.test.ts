import { CodeMemory, popcount } from '../../../server/modules/memory/hamming-wasm';
import { binaryCode, codeBytes, VectorCodeIndex } from '../../../server/modules/memory/vector-code-index';

/** A deterministic PRNG, so a failure can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const randomVector = (r: () => number, dims: number) => Float32Array.from({ length: dims }, () => r() - 0.5);

/** Bits that differ, counted one dimension at a time: the reference the index must agree with. */
function hamming(a: Float32Array, b: Float32Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) if (a[i]! > 0 !== b[i]! > 0) d++;
  return d;
}

describe('CodeMemory (Hamming distances in WebAssembly)', () => {
  it.each(
    [1, 31, 32, 33, 64, 100, 384, 768, 1000].flatMap((dims) => [
      [dims, true],
      [dims, false],
    ]),
  )('agrees with a bit-by-bit count for %i dimensions, across growth (WebAssembly: %s)', (dims, useWasm) => {
    const r = rng(dims);
    const words = Math.ceil(dims / 32);
    const memory = new CodeMemory(Math.ceil(words / 2), 4, useWasm);
    const vectors = Array.from({ length: 300 }, () => randomVector(r, dims));
    for (const [i, v] of vectors.entries()) {
      if (i >= memory.capacity) memory.grow(memory.capacity * 2);
      memory.words.set(binaryCode(v), i * memory.stride * 2);
    }
    const query = randomVector(r, dims);
    const out = new Uint16Array(vectors.length);
    memory.distances(binaryCode(query), vectors.length, out);
    expect([...out]).toEqual(vectors.map((v) => hamming(v, query)));
  });

  it('counts the sign bit of a word in its JavaScript fallback', () => {
    expect(popcount(-1)).toBe(32);
    expect(popcount(0x80000000 | 0)).toBe(1);
  });
});

describe('VectorCodeIndex', () => {
  it.each([200, 256])(
    'finds the nearest codes across owners, after removals, moves and growth past the loaded size (%i dimensions)',
    async (dims) => {
      const r = rng(7);
      const stored = new Map<number, { owner: string; v: Float32Array }>();
      for (let seq = 1; seq <= 150; seq++)
        stored.set(seq, { owner: seq % 3 ? 'user:a' : 'global', v: randomVector(r, dims) });
      // Blocks of up to 7 codes, as the store reads them in bulk.
      const index = new VectorCodeIndex(dims, async (owner) => {
        const mine = [...stored].filter(([, e]) => e.owner === owner);
        return Array.from({ length: Math.ceil(mine.length / 7) }, (_, b) => mine.slice(b * 7, b * 7 + 7)).map(
          (block) => ({
            seqs: block.map(([seq]) => seq),
            codes: Buffer.concat(block.map(([, e]) => codeBytes(binaryCode(e.v)))),
          }),
        );
      });
      await index.load(['user:a', 'global']);
      // Writes after loading: new entries (the owner's arrays grow), a removal, and an entry that changes owner.
      const set: Array<{ seq: number; owner: string; code: Int32Array }> = [];
      for (let seq = 151; seq <= 400; seq++) {
        const e = { owner: 'user:a', v: randomVector(r, dims) };
        stored.set(seq, e);
        set.push({ seq, owner: e.owner, code: binaryCode(e.v) });
      }
      stored.get(3)!.owner = 'global';
      set.push({ seq: 3, owner: 'global', code: binaryCode(stored.get(3)!.v) });
      stored.delete(10);
      index.apply({ set, removed: [10] });

      const query = randomVector(r, dims);
      const k = 25;
      const got = await index.nearest(query, ['user:a', 'global'], k);
      // The reference: the 4k nearest by Hamming distance (and all tied with the last), re-ranked by the dot
      // product of the query with each code read as ±1 per dimension.
      const byDistance = [...stored].map(([seq, e]) => ({ seq, d: hamming(e.v, query) })).sort((a, b) => a.d - b.d);
      const cut = byDistance[4 * k - 1]!.d;
      const signDot = (seq: number) => stored.get(seq)!.v.reduce((sum, x, i) => sum + (x > 0 ? query[i]! : -query[i]!), 0);
      const expected = byDistance
        .filter((e) => e.d <= cut)
        .map((e) => ({ seq: e.seq, dot: signDot(e.seq) }))
        .sort((a, b) => b.dot - a.dot)
        .slice(0, k);
      expect(got).toHaveLength(k);
      expect(new Set(got)).toEqual(new Set(expected.map((e) => e.seq)));
      const dots = got.map(signDot);
      for (let i = 1; i < dots.length; i++) expect(dots[i]!).toBeLessThanOrEqual(dots[i - 1]! + 1e-4);
      expect(got).not.toContain(10);

      const onlyGlobal = await index.nearest(query, ['global'], 1000);
      expect(new Set(onlyGlobal)).toEqual(
        new Set([...stored].filter(([, e]) => e.owner === 'global').map(([seq]) => seq)),
      );
    },
  );
});
