// === Hamming distances of binary codes in WebAssembly
// The coarse step of vector search compares a query's code with every code of the owners searched. In
// WebAssembly a 64-bit word takes one xor and one `popcnt` instruction, where JavaScript needs a dozen
// operations per 32 bits. The module is written here byte by byte (no build step, no file to load): one
// function over a memory the caller owns.

/** Unsigned LEB128 (sizes and counts in a module). */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

function section(id: number, content: number[]): number[] {
  return [id, ...leb(content.length), ...content];
}

function name(text: string): number[] {
  return [...leb(text.length), ...Buffer.from(text, 'ascii')];
}

const I32 = 0x7f;
const I64 = 0x7e;
// Instructions used below.
const op = {
  block: 0x02,
  loop: 0x03,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  get: 0x20,
  set: 0x21,
  tee: 0x22,
  i32Const: 0x41,
  i64Const: 0x42,
  i64Load: 0x29,
  i64Store16: 0x3d,
  i32GeU: 0x4f,
  i32LtU: 0x49,
  i32Add: 0x6a,
  i32Shl: 0x74,
  i64Popcnt: 0x7b,
  i64Add: 0x7c,
  i64Xor: 0x85,
} as const;

/**
 * `hamming(codes, count, stride, query, dist)`: for each of `count` codes of `stride` 64-bit words from byte
 * offset `codes`, the number of bits that differ from the `stride` words at `query`, stored as a u16 at
 * `dist + 2 × i`.
 */
function moduleBytes(): Uint8Array {
  const [codes, count, stride, query, dist, i, j, d] = [0, 1, 2, 3, 4, 5, 6, 7];
  const { get, set, tee } = op;
  const wordAt = (base: number) => [get, base, get, j, op.i32Const, 3, op.i32Shl, op.i32Add, op.i64Load, 3, 0];
  const body = [
    ...[2, 2, I32, 1, I64], // locals: i, j (i32); d (i64)
    op.block, 0x40,
    op.loop, 0x40,
    ...[get, i, get, count, op.i32GeU, op.brIf, 1],
    ...[op.i64Const, 0, set, d, op.i32Const, 0, set, j],
    op.loop, 0x40,
    ...[get, d, ...wordAt(codes), ...wordAt(query), op.i64Xor, op.i64Popcnt, op.i64Add, set, d],
    ...[get, j, op.i32Const, 1, op.i32Add, tee, j, get, stride, op.i32LtU, op.brIf, 0],
    op.end,
    ...[get, dist, get, i, op.i32Const, 1, op.i32Shl, op.i32Add, get, d, op.i64Store16, 1, 0],
    ...[get, codes, get, stride, op.i32Const, 3, op.i32Shl, op.i32Add, set, codes],
    ...[get, i, op.i32Const, 1, op.i32Add, set, i, op.br, 0],
    op.end,
    op.end,
    op.end,
  ];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]),
    ...section(2, [1, ...name('m'), ...name('memory'), 0x02, 0x00, 1]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name('hamming'), 0x00, 0]),
    ...section(10, [1, ...leb(body.length), ...body]),
  ]);
}

/** The part of the WebAssembly API used here (the project's type libraries do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
}
const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

let compiled: object | null | undefined;

/** The compiled module, or null where WebAssembly cannot run (then the caller counts bits in JavaScript). */
function hammingModule(): object | null {
  if (compiled === undefined) {
    try {
      compiled = wasm ? new wasm.Module(moduleBytes()) : null;
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

const PAGE = 65536;

/**
 * Codes of one owner in a WebAssembly memory of their own: [query | codes … | distances]. Each code takes
 * `stride` 64-bit words (the code's 32-bit words, padded with zero to an even count).
 */
export class CodeMemory {
  /** The codes as 32-bit words, `2 × stride` per code (a view that is replaced when the memory grows). */
  words: Int32Array;
  private buffer: ArrayBuffer;
  private readonly memory: WasmMemory | null;
  private readonly run: ((codes: number, count: number, stride: number, query: number, dist: number) => void) | null;
  private readonly base: number;

  constructor(
    readonly stride: number,
    capacity: number,
    /** False counts bits in JavaScript (as where WebAssembly cannot run). */
    useWasm = true,
  ) {
    const module = useWasm ? hammingModule() : null;
    this.base = stride * 8;
    this.memory = module ? new wasm!.Memory({ initial: Math.ceil(this.bytesFor(capacity) / PAGE) || 1 }) : null;
    this.run = this.memory ? (new wasm!.Instance(module!, { m: { memory: this.memory } }).exports.hamming as NonNullable<CodeMemory['run']>) : null;
    this.buffer = this.memory?.buffer ?? new ArrayBuffer(this.bytesFor(capacity));
    this.words = this.view(capacity);
  }

  /** Codes this memory holds before it must grow. */
  get capacity(): number {
    return this.words.length / (this.stride * 2);
  }

  /** Room for `capacity` codes (their contents stay where they are). */
  grow(capacity: number): void {
    const need = this.bytesFor(capacity);
    const have = this.buffer.byteLength;
    if (need > have && this.memory) {
      this.memory.grow(Math.ceil((need - have) / PAGE));
      this.buffer = this.memory.buffer;
    } else if (need > have) {
      const next = new ArrayBuffer(need);
      new Uint8Array(next).set(new Uint8Array(this.buffer));
      this.buffer = next;
    }
    this.words = this.view(capacity);
  }

  /** Bits that differ between `query` (32-bit words) and each of the first `count` codes, into `out`. */
  distances(query: Int32Array, count: number, out: Uint16Array): void {
    const words = this.stride * 2;
    if (!this.run) {
      const codes = this.words;
      for (let i = 0, o = 0; i < count; i++, o += words) {
        let d = 0;
        for (let j = 0; j < query.length; j++) d += popcount(codes[o + j]! ^ query[j]!);
        out[i] = d;
      }
      return;
    }
    const q = new Int32Array(this.buffer, 0, words);
    q.fill(0);
    q.set(query.subarray(0, words));
    const dist = this.base + this.capacity * words * 4;
    this.run(this.base, count, this.stride, 0, dist);
    out.set(new Uint16Array(this.buffer, dist, count));
  }

  private bytesFor(capacity: number): number {
    return this.base + capacity * this.stride * 8 + capacity * 2;
  }

  private view(capacity: number): Int32Array {
    return new Int32Array(this.buffer, this.base, capacity * this.stride * 2);
  }
}

export function popcount(x: number): number {
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
