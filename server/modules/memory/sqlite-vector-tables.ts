import type { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import type { Db } from '../../persistence/db';
import { vectorBytes, vectorFromBytes } from './memory-embedder';
import { binaryCode, codeBytes, VectorCodeIndex } from './vector-code-index';

// === The SQLite vector tables of SqlMemoryStore
// `memory_vec` (sqlite-vec vec0, rowid = seq, partitioned by owner) keeps the float vectors;
// `memory_vec_bits` (seq, owner, code) their binary codes for the coarse step of search, loaded into a
// VectorCodeIndex. Both are created for the embedding dimension in use and rebuilt empty when it changes.

export const VEC_TABLE = 'memory_vec';
export const BITS_TABLE = 'memory_vec_bits';

type Query = (ctx: Ctx, sql: string, params?: readonly unknown[]) => Promise<unknown[]>;

/** One vector written in a transaction, applied to the code index once it committed. */
export interface VectorWrite {
  seq: number;
  owner: string;
  code: Int32Array;
}

export class SqliteVectorTables {
  /** Dimension of the existing `memory_vec` table, null when there is none. */
  dims: number | null = null;
  codes: VectorCodeIndex | null = null;
  private dataVersion: number | null = null;

  constructor(
    private readonly db: Db,
    private readonly query: Query,
    private readonly logger: Logger,
  ) {}

  /** Reads the dimension of an existing table; creates (and fills) the codes table of an older database. */
  async open(ctx: Ctx): Promise<void> {
    await this.readDims(ctx);
    if (this.dims === null) return;
    const [bits] = (await this.query(ctx, `SELECT name FROM sqlite_master WHERE name = '${BITS_TABLE}'`)) as Array<{ name: string }>;
    if (!bits) await this.backfillCodes(ctx);
    this.useCodes(this.dims);
  }

  private useCodes(dims: number): void {
    this.codes = new VectorCodeIndex(dims, async (owner) => {
      return (await this.query(this.loadCtx!, `SELECT seq, code FROM ${BITS_TABLE} WHERE owner = ?`, [owner])) as Array<{ seq: number; code: Uint8Array }>;
    });
  }

  /** Ctx the code loader reads with (that of the search asking). */
  private loadCtx: Ctx | null = null;

  private async readDims(ctx: Ctx): Promise<void> {
    const [row] = (await this.query(ctx, `SELECT sql FROM sqlite_master WHERE name = '${VEC_TABLE}'`)) as Array<{ sql: string }>;
    const match = row ? /float\[(\d+)\]/.exec(row.sql) : null;
    this.dims = match ? Number(match[1]) : null;
  }

  private async createCodesTable(ctx: Ctx): Promise<void> {
    await this.query(ctx, `CREATE TABLE IF NOT EXISTS ${BITS_TABLE} (seq INTEGER PRIMARY KEY, owner TEXT NOT NULL, code BLOB NOT NULL)`);
    await this.query(ctx, `CREATE INDEX IF NOT EXISTS ${BITS_TABLE}_owner ON ${BITS_TABLE} (owner)`);
  }

  /** Codes of every vector already in `memory_vec` (a database from before the codes table). */
  private async backfillCodes(ctx: Ctx): Promise<void> {
    await this.db.withTransaction(ctx, async (tx) => {
      await this.createCodesTable(tx);
      const rows = (await this.query(tx, `SELECT rowid AS seq, owner, embedding FROM ${VEC_TABLE}`)) as Array<{ seq: number | bigint; owner: string; embedding: Uint8Array }>;
      for (const row of rows) await this.insertCode(tx, { seq: Number(row.seq), owner: row.owner, code: binaryCode(vectorFromBytes(row.embedding)) });
      if (rows.length) this.logger.info({ vectors: rows.length }, 'memory search: binary codes built for the stored vectors');
    });
  }

  /** Creates the tables for this dimension; tables of another dimension (new model) are rebuilt empty. */
  async ensure(ctx: Ctx, dims: number): Promise<void> {
    if (this.dims === dims) return;
    await this.readDims(ctx);
    if (this.dims === dims) return;
    await this.db.withTransaction(ctx, async (tx) => {
      if (this.dims !== null) {
        this.logger.info({ from: this.dims, to: dims }, 'embedding dimension changed — rebuilding the vector index');
        await this.query(tx, `DROP TABLE ${VEC_TABLE}`);
        await this.query(tx, `DROP TABLE IF EXISTS ${BITS_TABLE}`);
        await this.query(tx, 'UPDATE memory_index SET "vectorModel" = NULL');
      }
      await this.query(tx, `CREATE VIRTUAL TABLE ${VEC_TABLE} USING vec0(owner text partition key, embedding float[${dims}] distance_metric=cosine)`);
      await this.createCodesTable(tx);
    });
    this.dims = dims;
    this.useCodes(dims);
  }

  /** Writes (or replaces) the vector of `seq`; returns what to apply to the code index after commit. */
  async put(tx: Ctx, seq: number, owner: string, vector: Float32Array, replace: boolean): Promise<VectorWrite> {
    if (replace) await this.query(tx, `DELETE FROM ${VEC_TABLE} WHERE rowid = ?`, [BigInt(seq)]);
    await this.query(tx, `INSERT INTO ${VEC_TABLE} (rowid, owner, embedding) VALUES (?, ?, ?)`, [BigInt(seq), owner, vectorBytes(vector)]);
    const write = { seq, owner, code: binaryCode(vector) };
    await this.insertCode(tx, write);
    return write;
  }

  private async insertCode(tx: Ctx, w: VectorWrite): Promise<void> {
    await this.query(tx, `INSERT OR REPLACE INTO ${BITS_TABLE} (seq, owner, code) VALUES (?, ?, ?)`, [w.seq, w.owner, codeBytes(w.code)]);
  }

  async remove(tx: Ctx, seqs: readonly number[]): Promise<void> {
    for (const seq of seqs) await this.query(tx, `DELETE FROM ${VEC_TABLE} WHERE rowid = ?`, [BigInt(seq)]);
    for (let i = 0; i < seqs.length; i += 400) {
      const part = seqs.slice(i, i + 400);
      await this.query(tx, `DELETE FROM ${BITS_TABLE} WHERE seq IN (${part.map(() => '?').join(', ')})`, part);
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
    const list =
      owners === 'all' ? ((await this.query(ctx, `SELECT DISTINCT owner FROM ${BITS_TABLE}`)) as Array<{ owner: string }>).map((r) => r.owner) : owners;
    return this.codes.nearest(vector, list, k);
  }

  /** Another connection (another process) committed: its vector writes are not in the loaded codes. */
  private async checkOtherWriters(ctx: Ctx): Promise<void> {
    const [row] = (await this.query(ctx, 'PRAGMA data_version')) as Array<{ data_version: number }>;
    const version = Number(row?.data_version ?? 0);
    if (this.dataVersion !== null && version !== this.dataVersion) this.codes?.clear();
    this.dataVersion = version;
  }

  /** The float vector of one item (when the embeddings cache has none). */
  async vectorOf(ctx: Ctx, seq: number): Promise<Float32Array | null> {
    const [row] = (await this.query(ctx, `SELECT embedding FROM ${VEC_TABLE} WHERE rowid = ?`, [BigInt(seq)])) as Array<{ embedding: Uint8Array }>;
    return row ? vectorFromBytes(row.embedding) : null;
  }
}
