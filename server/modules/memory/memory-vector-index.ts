import type { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import { similarity } from './hybrid-ranking';
import { vectorBytes, vectorFromBytes } from './memory-embedder';

/** Runs SQL on the store's database (inside `ctx`'s transaction when there is one). */
export type RunSql = (ctx: Ctx, sql: string, params?: readonly unknown[]) => Promise<unknown[]>;

/** Table of the vectors of `memory_index` rows (one per seq), created at runtime for the embedding's dimension. */
export const VEC_TABLE = 'memory_vec';

/**
 * The vector side of {@link SqlMemoryStore}: one vector per `memory_index` row, nearest-neighbour search
 * within the visible owners. SQLite: a sqlite-vec `vec0` table partitioned by owner. PostgreSQL: a plain
 * table of float32 blobs scanned exactly per owner (cosine in the process).
 */
export interface MemoryVectorIndex {
  /** Dimension of the existing index, null when there is none yet. */
  readonly dims: number | null;
  /** Whether the index can be used at all (the sqlite-vec extension is loaded). */
  open(ctx: Ctx): Promise<boolean>;
  /** Creates the index for `dims`; an index of another dimension (new model) is rebuilt empty. */
  ensure(ctx: Ctx, dims: number): Promise<void>;
  put(ctx: Ctx, seq: number, owner: string, vector: Float32Array): Promise<void>;
  remove(ctx: Ctx, seq: number): Promise<void>;
  /** Seqs of the `k` nearest vectors per visible owner (or over all for ADMIN listings). */
  nearest(ctx: Ctx, vector: Float32Array, owners: readonly string[] | 'all', k: number): Promise<number[]>;
  vectorOf(ctx: Ctx, seq: number): Promise<Float32Array | null>;
}

/** sqlite-vec: `vec0(owner text partition key, embedding float[dims] distance_metric=cosine)`, rowid = seq. */
export class SqliteVecIndex implements MemoryVectorIndex {
  dims: number | null = null;
  private loaded = false;

  constructor(
    private readonly sql: RunSql,
    private readonly withTransaction: <T>(ctx: Ctx, fn: (tx: Ctx) => Promise<T>) => Promise<T>,
    private readonly logger: Logger,
  ) {}

  async open(ctx: Ctx): Promise<boolean> {
    try {
      await this.sql(ctx, 'SELECT vec_version() AS v');
      this.loaded = true;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'sqlite-vec is not loaded — memory search is keyword-only');
    }
    await this.readDims(ctx);
    return this.loaded;
  }

  private async readDims(ctx: Ctx): Promise<void> {
    if (!this.loaded) return;
    const [row] = (await this.sql(ctx, `SELECT sql FROM sqlite_master WHERE name = '${VEC_TABLE}'`)) as Array<{ sql: string }>;
    const match = row ? /float\[(\d+)\]/.exec(row.sql) : null;
    this.dims = match ? Number(match[1]) : null;
  }

  async ensure(ctx: Ctx, dims: number): Promise<void> {
    if (this.dims === dims) return;
    await this.readDims(ctx);
    if (this.dims === dims) return;
    await this.withTransaction(ctx, async (tx) => {
      if (this.dims !== null) {
        this.logger.info({ from: this.dims, to: dims }, 'embedding dimension changed — rebuilding the vector index');
        await this.sql(tx, `DROP TABLE ${VEC_TABLE}`);
        await this.sql(tx, 'UPDATE memory_index SET "vectorModel" = NULL');
      }
      await this.sql(tx, `CREATE VIRTUAL TABLE ${VEC_TABLE} USING vec0(owner text partition key, embedding float[${dims}] distance_metric=cosine)`);
    });
    this.dims = dims;
  }

  async put(ctx: Ctx, seq: number, owner: string, vector: Float32Array): Promise<void> {
    await this.remove(ctx, seq);
    await this.sql(ctx, `INSERT INTO ${VEC_TABLE} (rowid, owner, embedding) VALUES (?, ?, ?)`, [BigInt(seq), owner, vectorBytes(vector)]);
  }

  async remove(ctx: Ctx, seq: number): Promise<void> {
    if (this.dims !== null) await this.sql(ctx, `DELETE FROM ${VEC_TABLE} WHERE rowid = ?`, [BigInt(seq)]);
  }

  async nearest(ctx: Ctx, vector: Float32Array, owners: readonly string[] | 'all', k: number): Promise<number[]> {
    const out = new Set<number>();
    for (const owner of owners === 'all' ? [null] : owners) {
      const rows = (await this.sql(
        ctx,
        `SELECT rowid AS seq FROM ${VEC_TABLE} WHERE embedding MATCH ? AND k = ?${owner === null ? '' : ' AND owner = ?'}`,
        owner === null ? [vectorBytes(vector), k] : [vectorBytes(vector), k, owner],
      )) as Array<{ seq: number | bigint }>;
      for (const row of rows) out.add(Number(row.seq));
    }
    return [...out];
  }

  async vectorOf(ctx: Ctx, seq: number): Promise<Float32Array | null> {
    const [row] = (await this.sql(ctx, `SELECT embedding FROM ${VEC_TABLE} WHERE rowid = ?`, [BigInt(seq)])) as Array<{ embedding: Uint8Array }>;
    return row ? vectorFromBytes(row.embedding) : null;
  }
}

/** Rows read at once by the exact scan. */
const SCAN_BATCH = 2000;

/**
 * PostgreSQL without pgvector: `memory_vec(seq, owner, dims, embedding bytea)`, nearest neighbours by an
 * exact cosine scan of the visible owners' vectors, read in batches (keyset on seq).
 */
export class PgScanVectorIndex implements MemoryVectorIndex {
  dims: number | null = null;

  constructor(
    private readonly sql: RunSql,
    private readonly withTransaction: <T>(ctx: Ctx, fn: (tx: Ctx) => Promise<T>) => Promise<T>,
    private readonly logger: Logger,
  ) {}

  async open(ctx: Ctx): Promise<boolean> {
    await this.sql(
      ctx,
      `CREATE TABLE IF NOT EXISTS ${VEC_TABLE} (seq integer PRIMARY KEY, owner character varying(340) NOT NULL, dims integer NOT NULL, embedding bytea NOT NULL)`,
    );
    await this.sql(ctx, `CREATE INDEX IF NOT EXISTS "IDX_memory_vec_owner" ON ${VEC_TABLE} (owner, seq)`);
    await this.readDims(ctx);
    return true;
  }

  private async readDims(ctx: Ctx): Promise<void> {
    const [row] = (await this.sql(ctx, `SELECT dims FROM ${VEC_TABLE} LIMIT 1`)) as Array<{ dims: number }>;
    this.dims = row ? Number(row.dims) : null;
  }

  async ensure(ctx: Ctx, dims: number): Promise<void> {
    if (this.dims === dims) return;
    await this.readDims(ctx);
    if (this.dims !== null && this.dims !== dims) {
      this.logger.info({ from: this.dims, to: dims }, 'embedding dimension changed — rebuilding the vector index');
      await this.withTransaction(ctx, async (tx) => {
        await this.sql(tx, `DELETE FROM ${VEC_TABLE}`);
        await this.sql(tx, 'UPDATE memory_index SET "vectorModel" = NULL');
      });
    }
    this.dims = dims;
  }

  async put(ctx: Ctx, seq: number, owner: string, vector: Float32Array): Promise<void> {
    await this.sql(
      ctx,
      `INSERT INTO ${VEC_TABLE} (seq, owner, dims, embedding) VALUES ($1, $2, $3, $4) ON CONFLICT (seq) DO UPDATE SET owner = excluded.owner, dims = excluded.dims, embedding = excluded.embedding`,
      [seq, owner, vector.length, vectorBytes(vector)],
    );
  }

  async remove(ctx: Ctx, seq: number): Promise<void> {
    await this.sql(ctx, `DELETE FROM ${VEC_TABLE} WHERE seq = $1`, [seq]);
  }

  async nearest(ctx: Ctx, vector: Float32Array, owners: readonly string[] | 'all', k: number): Promise<number[]> {
    const out = new Set<number>();
    for (const owner of owners === 'all' ? [null] : owners) {
      const best: Array<{ seq: number; score: number }> = [];
      let after = -1;
      for (;;) {
        const rows = (await this.sql(
          ctx,
          `SELECT seq, embedding FROM ${VEC_TABLE} WHERE seq > $1 AND dims = $2${owner === null ? '' : ' AND owner = $4'} ORDER BY seq LIMIT $3`,
          owner === null ? [after, vector.length, SCAN_BATCH] : [after, vector.length, SCAN_BATCH, owner],
        )) as Array<{ seq: number; embedding: Uint8Array }>;
        for (const row of rows) {
          best.push({ seq: Number(row.seq), score: similarity(vector, vectorFromBytes(row.embedding)) });
          after = Number(row.seq);
        }
        best.sort((a, b) => b.score - a.score);
        best.length = Math.min(best.length, k);
        if (rows.length < SCAN_BATCH) break;
      }
      for (const hit of best) out.add(hit.seq);
    }
    return [...out];
  }

  async vectorOf(ctx: Ctx, seq: number): Promise<Float32Array | null> {
    const [row] = (await this.sql(ctx, `SELECT embedding FROM ${VEC_TABLE} WHERE seq = $1`, [seq])) as Array<{ embedding: Uint8Array }>;
    return row ? vectorFromBytes(row.embedding) : null;
  }
}
