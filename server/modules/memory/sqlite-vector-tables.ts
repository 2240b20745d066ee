import type { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import type { Db } from '../../persistence/db';
import { vectorBytes, vectorFromBytes } from './vector-bytes';
import { binaryCode, codeBytes, VectorCodeIndex, type CodeBlock } from './vector-code-index';

// === The vector table of SqlMemoryStore on SQLite
// `memory_vectors` (seq = memory_index.seq, owner, code, embedding): the float vector of each item and its
// binary code. Search scans the codes (loaded per owner into a VectorCodeIndex) and re-ranks the nearest by
// exact cosine over the float vectors, read by primary key. The table is created for the embedding
// dimension in use (its CHECK says which) and rebuilt empty when the dimension changes. Databases from
// before it kept vectors in a sqlite-vec table (`memory_vec`); those are moved over once.

export const VECTORS_TABLE = 'memory_vectors';
const LEGACY_VEC_TABLE = 'memory_vec';
/**
 * Index of (owner, code): loading an owner's codes reads it alone (about 130 bytes an entry) instead of
 * every row with its float vector (1.5–3 KB each; 100k rows: 300 MB read for 10 MB of codes).
 */
const CODES_INDEX = `${VECTORS_TABLE}_owner_code`;
const OLD_OWNER_INDEX = `${VECTORS_TABLE}_owner`;

type Query = (ctx: Ctx, sql: string, params?: readonly unknown[]) => Promise<unknown[]>;
/** A query on one connection (the search thread's, or the app's bound to a ctx). */
export type ReadQuery = (sql: string, params?: readonly unknown[]) => Promise<unknown[]>;

/**
 * Ranges of the codes' first byte that one owner's codes are read in: each a range of the (owner, code)
 * index, so together they read every code once, in blocks of about 1/64 of the owner's codes.
 */
const CODE_RANGES = 64;

/**
 * The binary codes of one owner's vectors (what `VectorCodeIndex` loads), in blocks: each range of the
 * codes' first byte is one row of seqs (text) and codes (one blob, end to end), aggregated in SQLite. Row by
 * row, 100k codes took 150–250 ms (a row object and a Buffer each); in blocks about 40 ms. Both aggregates
 * of a row see its rows in the same order, so the n-th seq goes with the n-th code.
 */
export async function readCodes(query: ReadQuery, owner: string): Promise<CodeBlock[]> {
  const blocks: CodeBlock[] = [];
  const columns = `group_concat(seq) AS seqs, CAST(group_concat(code, '') AS BLOB) AS codes`;
  for (let r = 0; r < CODE_RANGES; r++) {
    const from = Buffer.from(r ? [Math.round((r * 256) / CODE_RANGES)] : []);
    const last = r === CODE_RANGES - 1;
    const to = last ? null : Buffer.from([Math.round(((r + 1) * 256) / CODE_RANGES)]);
    const [row] = (await query(
      `SELECT ${columns} FROM ${VECTORS_TABLE} WHERE owner = ? AND code >= ?${to ? ' AND code < ?' : ''}`,
      to ? [owner, from, to] : [owner, from],
    )) as Array<{ seqs: string | null; codes: Uint8Array | null }>;
    if (!row?.seqs || !row.codes) continue;
    blocks.push({ seqs: parseSeqs(row.seqs), codes: row.codes });
  }
  return blocks;
}

/**
 * The seqs of a block as `group_concat` wrote them ('12,7,3051'), read digit by digit into an Int32Array: a
 * string and an array slot per seq (split and Number) took about as long as reading the codes from SQLite.
 */
export function parseSeqs(text: string): Int32Array {
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 44) n++;
  const out = new Int32Array(n);
  let k = 0;
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 44) {
      out[k++] = value;
      value = 0;
    } else value = value * 10 + (c - 48);
  }
  out[k] = value;
  return out;
}

/**
 * Owners that have vectors (a search over every owner), one probe of the (owner, code) index per owner:
 * `SELECT DISTINCT owner` read the whole index (100k codes: 40–60 ms on a fresh connection).
 */
export async function readVectorOwners(query: ReadQuery): Promise<string[]> {
  const owners: string[] = [];
  for (;;) {
    const after = owners.length ? ` WHERE owner > ?` : '';
    const [row] = (await query(`SELECT owner FROM ${VECTORS_TABLE}${after} ORDER BY owner LIMIT 1`, owners.length ? [owners[owners.length - 1]] : [])) as Array<{ owner: string }>;
    if (!row) return owners;
    owners.push(row.owner);
  }
}

/**
 * A query for a practice search among `owner`'s items (memory-search-worker.ts): the text and vector of
 * one of their entries that has one (the first in the codes index: found at once, where the newest needed
 * every entry read and sorted, 0.3 s at 100k); null when none has.
 */
export async function readPracticeQuery(query: ReadQuery, owner: string): Promise<{ text: string; vector: Float32Array; model: string } | null> {
  const [row] = (await query(
    `SELECT i.content, i."vectorModel" AS model, v.embedding FROM ${VECTORS_TABLE} v JOIN memory_index i ON i.seq = v.seq WHERE v.owner = ? AND i."vectorModel" IS NOT NULL LIMIT 1`,
    [owner],
  )) as Array<{ content: string; model: string; embedding: Uint8Array }>;
  return row ? { text: row.content, vector: vectorFromBytes(row.embedding), model: row.model } : null;
}

/** Float vectors of these items, by seq. */
export async function readVectors(query: ReadQuery, seqs: readonly number[]): Promise<Map<number, Float32Array>> {
  const out = new Map<number, Float32Array>();
  for (let i = 0; i < seqs.length; i += 400) {
    const part = seqs.slice(i, i + 400);
    const rows = (await query(`SELECT seq, embedding FROM ${VECTORS_TABLE} WHERE seq IN (${part.map(() => '?').join(', ')})`, part)) as Array<{ seq: number; embedding: Uint8Array }>;
    for (const row of rows) out.set(Number(row.seq), vectorFromBytes(row.embedding));
  }
  return out;
}

/** One vector written in a transaction, applied to the code index once it committed. */
export interface VectorWrite {
  seq: number;
  owner: string;
  code: Int32Array;
}

export class SqliteVectorTables {
  /** Dimension of the vector table, null when there is none. */
  dims: number | null = null;
  codes: VectorCodeIndex | null = null;
  /** Counts the times the loaded codes were dropped (rebuild, other writers): search threads drop theirs too. */
  generation = 0;
  private dataVersion: number | null = null;
  /** Ctx the code loader reads with (that of the search asking). */
  private loadCtx: Ctx | null = null;

  constructor(
    private readonly db: Db,
    private readonly query: Query,
    private readonly logger: Logger,
  ) {}

  /** Reads the dimension of an existing table; moves the vectors of an older database over. */
  async open(ctx: Ctx): Promise<void> {
    await this.readDims(ctx);
    if (this.dims === null) await this.moveLegacy(ctx);
    if (this.dims !== null) {
      await this.ensureCodesIndex(ctx);
      this.useCodes(this.dims);
    }
  }

  /** Tables created before the codes index get it once (their owner index goes). */
  private async ensureCodesIndex(ctx: Ctx): Promise<void> {
    const [row] = (await this.query(ctx, `SELECT name FROM sqlite_master WHERE type = 'index' AND name = '${CODES_INDEX}'`)) as unknown[];
    if (row) return;
    const t0 = performance.now();
    await this.db.withTransaction(ctx, async (tx) => {
      await this.query(tx, `CREATE INDEX IF NOT EXISTS ${CODES_INDEX} ON ${VECTORS_TABLE} (owner, code)`);
      await this.query(tx, `DROP INDEX IF EXISTS ${OLD_OWNER_INDEX}`);
    });
    this.logger.info({ ms: Math.round(performance.now() - t0) }, 'memory search: index of the vector codes built');
  }

  private useCodes(dims: number): void {
    this.codes = new VectorCodeIndex(dims, (owner) => readCodes((sql, params) => this.query(this.loadCtx!, sql, params), owner));
  }

  private async readDims(ctx: Ctx): Promise<void> {
    const [row] = (await this.query(ctx, `SELECT sql FROM sqlite_master WHERE name = '${VECTORS_TABLE}'`)) as Array<{ sql: string }>;
    const match = row ? /length\(embedding\) = (\d+)/.exec(row.sql) : null;
    this.dims = match ? Number(match[1]) / 4 : null;
  }

  private async create(tx: Ctx, dims: number): Promise<void> {
    await this.query(tx, `CREATE TABLE ${VECTORS_TABLE} (seq INTEGER PRIMARY KEY, owner TEXT NOT NULL, code BLOB NOT NULL, embedding BLOB NOT NULL CHECK (length(embedding) = ${dims * 4}))`);
    await this.query(tx, `CREATE INDEX ${CODES_INDEX} ON ${VECTORS_TABLE} (owner, code)`);
  }

  /** Vectors of a database from before this table (sqlite-vec's `memory_vec`), moved over once. */
  private async moveLegacy(ctx: Ctx): Promise<void> {
    const [legacy] = (await this.query(ctx, `SELECT sql FROM sqlite_master WHERE name = '${LEGACY_VEC_TABLE}'`)) as Array<{ sql: string }>;
    const match = legacy ? /float\[(\d+)\]/.exec(legacy.sql) : null;
    if (!match) return;
    const dims = Number(match[1]);
    await this.db.withTransaction(ctx, async (tx) => {
      await this.create(tx, dims);
      const rows = (await this.query(tx, `SELECT rowid AS seq, owner, embedding FROM ${LEGACY_VEC_TABLE}`)) as Array<{ seq: number | bigint; owner: string; embedding: Uint8Array }>;
      for (const row of rows) await this.insert(tx, Number(row.seq), row.owner, vectorFromBytes(row.embedding));
      await this.query(tx, `DROP TABLE ${LEGACY_VEC_TABLE}`);
      if (rows.length) this.logger.info({ vectors: rows.length }, 'memory search: vectors moved to memory_vectors');
    });
    this.dims = dims;
  }

  /** Creates the table for this dimension; a table of another dimension (new model) is rebuilt empty. */
  async ensure(ctx: Ctx, dims: number): Promise<void> {
    if (this.dims === dims) return;
    await this.readDims(ctx);
    if (this.dims === dims) return;
    await this.db.withTransaction(ctx, async (tx) => {
      if (this.dims !== null) {
        this.logger.info({ from: this.dims, to: dims }, 'embedding dimension changed — rebuilding the vector index');
        await this.query(tx, `DROP TABLE ${VECTORS_TABLE}`);
        await this.query(tx, 'UPDATE memory_index SET "vectorModel" = NULL');
      }
      await this.create(tx, dims);
    });
    this.dims = dims;
    this.codes?.clear();
    this.generation++;
    this.useCodes(dims);
  }

  private async insert(tx: Ctx, seq: number, owner: string, vector: Float32Array): Promise<VectorWrite> {
    const code = binaryCode(vector);
    await this.query(tx, `INSERT OR REPLACE INTO ${VECTORS_TABLE} (seq, owner, code, embedding) VALUES (?, ?, ?, ?)`, [seq, owner, codeBytes(code), vectorBytes(vector)]);
    return { seq, owner, code };
  }

  /** Writes (or replaces) the vector of `seq`; returns what to apply to the code index after commit. */
  put(tx: Ctx, seq: number, owner: string, vector: Float32Array): Promise<VectorWrite> {
    return this.insert(tx, seq, owner, vector);
  }

  /** `put` for many, in multi-row statements. */
  async putMany(tx: Ctx, list: ReadonlyArray<{ seq: number; owner: string; vector: Float32Array }>): Promise<VectorWrite[]> {
    const out: VectorWrite[] = [];
    for (let i = 0; i < list.length; i += 200) {
      const part = list.slice(i, i + 200);
      const params: unknown[] = [];
      for (const { seq, owner, vector } of part) {
        const code = binaryCode(vector);
        params.push(seq, owner, codeBytes(code), vectorBytes(vector));
        out.push({ seq, owner, code });
      }
      await this.query(tx, `INSERT OR REPLACE INTO ${VECTORS_TABLE} (seq, owner, code, embedding) VALUES ${part.map(() => '(?, ?, ?, ?)').join(', ')}`, params);
    }
    return out;
  }

  async remove(tx: Ctx, seqs: readonly number[]): Promise<void> {
    for (let i = 0; i < seqs.length; i += 400) {
      const part = seqs.slice(i, i + 400);
      await this.query(tx, `DELETE FROM ${VECTORS_TABLE} WHERE seq IN (${part.map(() => '?').join(', ')})`, part);
    }
  }

  /** Applies committed writes to the loaded codes. */
  committed(set: readonly VectorWrite[], removed: readonly number[] = []): void {
    if (set.length || removed.length) this.codes?.apply({ set, removed });
  }

  /** Candidates of the coarse step: seqs of the nearest codes among `owners` ('all': every owner). */
  async nearest(ctx: Ctx, vector: Float32Array, owners: readonly string[] | 'all', k: number): Promise<number[]> {
    if (!this.codes) return [];
    this.loadCtx = ctx;
    await this.checkOtherWriters(ctx);
    const list = owners === 'all' ? await readVectorOwners((sql, params) => this.query(ctx, sql, params)) : owners;
    return this.codes.nearest(vector, list, k);
  }

  /**
   * Another connection (another process; a search thread only reads) committed: its vector writes are not
   * in the loaded codes, which are dropped (and `generation` counts up).
   */
  async checkOtherWriters(ctx: Ctx): Promise<void> {
    const [row] = (await this.query(ctx, 'PRAGMA data_version')) as Array<{ data_version: number }>;
    const version = Number(row?.data_version ?? 0);
    if (this.dataVersion !== null && version !== this.dataVersion) {
      this.codes?.clear();
      this.generation++;
    }
    this.dataVersion = version;
  }

  /** Float vectors of these items, by seq. */
  vectors(ctx: Ctx, seqs: readonly number[]): Promise<Map<number, Float32Array>> {
    return readVectors((sql, params) => this.query(ctx, sql, params), seqs);
  }
}
