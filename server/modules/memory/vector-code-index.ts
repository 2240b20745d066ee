import { CodeMemory } from './hamming-wasm';

// === Binary codes of the memory vectors, in memory, for the coarse step of vector search
// A code keeps one bit per dimension (the sign), so 768 dimensions take 96 bytes and a scan of 100k codes is
// a few million popcounts. The nearest codes by Hamming distance are the candidates that the store then
// re-ranks by exact cosine over the float vectors. Codes are persisted in `memory_vec_bits` and loaded per
// owner on first use; this process's writes update the loaded owners, writes of other processes (seen
// through SQLite's data_version) drop them so they are loaded again.

/** Sign bits of `v`, 32 dimensions per word (dimension i is bit i % 32 of word i / 32). */
export function binaryCode(v: Float32Array): Int32Array {
  const words = new Int32Array(Math.ceil(v.length / 32));
  for (let i = 0; i < v.length; i++) if (v[i]! > 0) words[i >>> 5]! |= 1 << (i & 31);
  return words;
}

/** The code as bytes for the database. */
export function codeBytes(code: Int32Array): Buffer {
  return Buffer.from(code.buffer, code.byteOffset, code.byteLength);
}

/** The codes of one owner: parallel arrays with swap-remove, and where each seq sits. */
class OwnerCodes {
  seqs: Int32Array;
  readonly memory: CodeMemory;
  count = 0;
  /** Slot of each seq, built on the first write after loading (a search needs none). */
  private slots: Map<number, number> | null = null;
  /** 32-bit words a code takes in `memory` (its words, padded to an even count). */
  private readonly stride: number;

  constructor(
    private readonly words: number,
    capacity = 64,
  ) {
    this.seqs = new Int32Array(capacity);
    this.memory = new CodeMemory(Math.ceil(words / 2), capacity);
    this.stride = this.memory.stride * 2;
  }

  private get slotOf(): Map<number, number> {
    if (!this.slots) {
      this.slots = new Map();
      for (let i = 0; i < this.count; i++) this.slots.set(this.seqs[i]!, i);
    }
    return this.slots;
  }

  /**
   * Appends a block as loaded (seqs not yet held): `codes` holds the codes end to end, `words × 4` bytes each
   * (what `codeBytes` wrote), copied in one go when a code needs no padding.
   */
  appendBlock(block: CodeBlock): void {
    const n = block.seqs.length;
    if (!n) return;
    const bytes = this.words * 4;
    if (block.codes.length !== n * bytes) throw new Error(`vector codes: ${block.codes.length} bytes for ${n} codes of ${bytes}`);
    let capacity = this.seqs.length;
    while (capacity < this.count + n) capacity *= 2;
    if (capacity > this.seqs.length) this.grow(capacity);
    const first = this.count;
    this.seqs.set(block.seqs, first);
    const target = new Uint8Array(this.memory.words.buffer, this.memory.words.byteOffset, this.memory.words.byteLength);
    const slotBytes = this.stride * 4;
    if (slotBytes === bytes) target.set(block.codes, first * slotBytes);
    else for (let i = 0; i < n; i++) target.set(block.codes.subarray(i * bytes, (i + 1) * bytes), (first + i) * slotBytes);
    this.count += n;
    if (this.slots) for (let i = first; i < this.count; i++) this.slots.set(this.seqs[i]!, i);
  }

  set(seq: number, code: Int32Array): void {
    let slot = this.slotOf.get(seq);
    if (slot === undefined) {
      if (this.count === this.seqs.length) this.grow(this.seqs.length * 2);
      slot = this.count++;
      this.slotOf.set(seq, slot);
      this.seqs[slot] = seq;
    }
    this.memory.words.set(code.subarray(0, this.words), slot * this.stride);
  }

  remove(seq: number): void {
    const slot = this.slotOf.get(seq);
    if (slot === undefined) return;
    const last = --this.count;
    this.slotOf.delete(seq);
    if (slot !== last) {
      const moved = this.seqs[last]!;
      this.seqs[slot] = moved;
      this.memory.words.copyWithin(slot * this.stride, last * this.stride, (last + 1) * this.stride);
      this.slotOf.set(moved, slot);
    }
  }

  private grow(capacity: number): void {
    const seqs = new Int32Array(capacity);
    seqs.set(this.seqs);
    this.seqs = seqs;
    this.memory.grow(capacity);
  }
}

/**
 * Codes of one owner as read in bulk: their seqs, and the codes end to end in the same order (`codeBytes`
 * of each, so all of one length).
 */
export interface CodeBlock {
  seqs: ArrayLike<number>;
  codes: Uint8Array;
}

/** Loads one owner's codes, in blocks. */
export type CodeLoader = (owner: string) => Promise<CodeBlock[]>;

export class VectorCodeIndex {
  private readonly owners = new Map<string, OwnerCodes>();
  private readonly loading = new Map<string, Promise<OwnerCodes>>();
  private readonly words: number;

  constructor(
    readonly dims: number,
    private readonly loader: CodeLoader,
  ) {
    this.words = Math.ceil(dims / 32);
  }

  /** Forgets every loaded owner (another process wrote, or the vector table was rebuilt). */
  clear(): void {
    this.owners.clear();
    this.loading.clear();
  }

  /** Applies this process's committed writes to the owners that are loaded. */
  apply(changes: { set?: ReadonlyArray<{ seq: number; owner: string; code: Int32Array }>; removed?: readonly number[] }): void {
    for (const seq of changes.removed ?? []) for (const o of this.owners.values()) o.remove(seq);
    for (const { seq, owner, code } of changes.set ?? []) {
      for (const [name, o] of this.owners) if (name !== owner) o.remove(seq);
      this.owners.get(owner)?.set(seq, code);
    }
    // A load that started before these writes may have missed them: let it be loaded again.
    this.loading.clear();
  }

  private async owner(owner: string): Promise<OwnerCodes> {
    const ready = this.owners.get(owner);
    if (ready) return ready;
    let pending = this.loading.get(owner);
    if (!pending) {
      pending = this.loader(owner).then((blocks) => {
        const codes = new OwnerCodes(this.words, Math.max(64, blocks.reduce((n, b) => n + b.seqs.length, 0)));
        for (const block of blocks) codes.appendBlock(block); // copied into the owner's arrays
        return codes;
      });
      this.loading.set(owner, pending);
    }
    const codes = await pending;
    if (this.loading.get(owner) === pending) {
      this.loading.delete(owner);
      this.owners.set(owner, codes);
    }
    return codes;
  }

  /** Loads these owners' codes now (ahead of the first search that needs them). */
  async load(owners: readonly string[]): Promise<void> {
    for (const owner of owners) await this.owner(owner);
  }

  /**
   * Seqs of the `k` codes nearest to `query` among `owners`, nearest first: the `SHORTLIST × k` nearest by
   * Hamming distance, re-ranked by `asymmetricScores` (the query's own values over each code's bits), which
   * orders them closer to the exact cosine than the distance between two codes does.
   */
  async nearest(query: Float32Array, owners: readonly string[], k: number): Promise<number[]> {
    const q = binaryCode(query);
    const lists = await Promise.all(owners.map((o) => this.owner(o)));
    const total = lists.reduce((s, l) => s + l.count, 0);
    if (!total || k <= 0) return [];
    const dist = new Uint16Array(total);
    let n = 0;
    for (const list of lists) {
      list.memory.distances(q, list.count, dist.subarray(n, n + list.count));
      n += list.count;
    }
    // Counting selection on the distance (0..dims): the cut-off distance that keeps at least the shortlist.
    const want = Math.min(total, k * SHORTLIST);
    const hist = new Uint32Array(this.dims + 2);
    for (let i = 0; i < total; i++) hist[dist[i]!]!++;
    let cut = 0;
    for (let acc = 0; cut <= this.dims; cut++) {
      acc += hist[cut]!;
      if (acc >= want) break;
    }
    const table = byteTable(query);
    const seqs: number[] = [];
    const scores: number[] = [];
    n = 0;
    for (const list of lists) {
      const bytes = new Uint8Array(list.memory.words.buffer, list.memory.words.byteOffset, list.count * list.memory.stride * 8);
      const slotBytes = list.memory.stride * 8;
      for (let slot = 0; slot < list.count; slot++) {
        if (dist[n + slot]! > cut) continue;
        seqs.push(list.seqs[slot]!);
        scores.push(codeScore(table, bytes, slot * slotBytes));
      }
      n += list.count;
    }
    const order = seqs.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
    return order.slice(0, k).map((i) => seqs[i]!);
  }
}

/** Codes taken by Hamming distance per code asked for, before the asymmetric re-ranking picks the nearest. */
const SHORTLIST = 4;

/**
 * For each byte of a code (8 dimensions), the sum of the query's values at the bits set, for all 256 byte
 * values: a code's score is then one lookup per byte.
 */
function byteTable(query: Float32Array): Float32Array {
  const bytes = Math.ceil(query.length / 8);
  const table = new Float32Array(bytes * 256);
  for (let b = 0; b < bytes; b++) {
    const base = b * 256;
    for (let v = 1; v < 256; v++) {
      const low = v & -v;
      const dim = b * 8 + (31 - Math.clz32(low));
      table[base + v] = table[base + (v ^ low)]! + (dim < query.length ? query[dim]! : 0);
    }
  }
  return table;
}

/**
 * Σ query[i] over the dimensions whose bit is set in the code at `offset`: the dot product of the query with
 * the code read as ±1 per dimension is twice this minus Σ query, so a higher score is a nearer vector.
 */
function codeScore(table: Float32Array, bytes: Uint8Array, offset: number): number {
  let score = 0;
  for (let b = 0, t = 0; t < table.length; b++, t += 256) score += table[t + bytes[offset + b]!]!;
  return score;
}
