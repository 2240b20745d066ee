import type { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import type { Db } from '../../persistence/db';
import { similarity } from './hybrid-ranking';
import { vectorBytes, vectorFromBytes } from './vector-bytes';
import { VECTORS_TABLE, type VectorWrite } from './sqlite-vector-tables';

// === The vector table of SqlMemoryStore on PostgreSQL (without pgvector)
// `memory_vectors` (seq = memory_index.seq, owner, dims, embedding bytea of float32): nearest neighbours by
// an exact cosine scan of the visible owners' vectors, read in batches (keyset on seq). Created at runtime
// like SQLite's; a change of the embedding dimension empties it.

type Query = (ctx: Ctx, sql: string, params?: readonly unknown[]) => Promise<unknown[]>;

/** Rows read at once by the scan. */
const SCAN_BATCH = 2000;
const NO_CODE = new Int32Array(0);

export class PgVectorTables {
  /** Dimension of the stored vectors, null when there are none. */
  dims: number | null = null;

  constructor(
    private readonly db: Db,
    private readonly query: Query,
    private readonly logger: Logger,
  ) {}

  async open(ctx: Ctx): Promise<void> {
    await this.query(ctx, `CREATE TABLE IF NOT EXISTS ${VECTORS_TABLE} (seq integer PRIMARY KEY, owner character varying(340) NOT NULL, dims integer NOT NULL, embedding bytea NOT NULL)`);
    await this.query(ctx, `CREATE INDEX IF NOT EXISTS "IDX_memory_vectors_owner" ON ${VECTORS_TABLE} (owner, seq)`);
    await this.readDims(ctx);
  }

  private async readDims(ctx: Ctx): Promise<void> {
    const [row] = (await this.query(ctx, `SELECT dims FROM ${VECTORS_TABLE} LIMIT 1`)) as Array<{ dims: number }>;
    this.dims = row ? Number(row.dims) : null;
  }

  async ensure(ctx: Ctx, dims: number): Promise<void> {
    if (this.dims === dims) return;
    await this.readDims(ctx);
    if (this.dims !== null && this.dims !== dims) {
      this.logger.info({ from: this.dims, to: dims }, 'embedding dimension changed — rebuilding the vector index');
      await this.db.withTransaction(ctx, async (tx) => {
        await this.query(tx, `DELETE FROM ${VECTORS_TABLE}`);
        await this.query(tx, 'UPDATE memory_index SET "vectorModel" = NULL');
      });
    }
    this.dims = dims;
  }

  async put(tx: Ctx, seq: number, owner: string, vector: Float32Array): Promise<VectorWrite> {
    await this.putMany(tx, [{ seq, owner, vector }]);
    return { seq, owner, code: NO_CODE };
  }

  async putMany(tx: Ctx, list: ReadonlyArray<{ seq: number; owner: string; vector: Float32Array }>): Promise<VectorWrite[]> {
    for (let i = 0; i < list.length; i += 200) {
      const part = list.slice(i, i + 200);
      const params: unknown[] = [];
      const rows = part.map(({ seq, owner, vector }) => {
        params.push(seq, owner, vector.length, vectorBytes(vector));
        const n = params.length;
        return `($${n - 3}, $${n - 2}, $${n - 1}, $${n})`;
      });
      await this.query(
        tx,
        `INSERT INTO ${VECTORS_TABLE} (seq, owner, dims, embedding) VALUES ${rows.join(', ')} ON CONFLICT (seq) DO UPDATE SET owner = excluded.owner, dims = excluded.dims, embedding = excluded.embedding`,
        params,
      );
    }
    return list.map(({ seq, owner }) => ({ seq, owner, code: NO_CODE }));
  }

  async remove(tx: Ctx, seqs: readonly number[]): Promise<void> {
    if (seqs.length) await this.query(tx, `DELETE FROM ${VECTORS_TABLE} WHERE seq = ANY($1)`, [[...seqs]]);
  }

  /** Nothing is cached in the process: every search reads the table. */
  committed(): void {}

  /** Seqs of the `k` nearest vectors per visible owner (or over all for ADMIN listings), best first. */
  async nearest(ctx: Ctx, vector: Float32Array, owners: readonly string[] | 'all', k: number): Promise<number[]> {
    const best: Array<{ seq: number; score: number }> = [];
    for (const owner of owners === 'all' ? [null] : owners) {
      const mine: Array<{ seq: number; score: number }> = [];
      let after = -1;
      for (;;) {
        const rows = (await this.query(
          ctx,
          `SELECT seq, embedding FROM ${VECTORS_TABLE} WHERE seq > $1 AND dims = $2${owner === null ? '' : ' AND owner = $4'} ORDER BY seq LIMIT $3`,
          owner === null ? [after, vector.length, SCAN_BATCH] : [after, vector.length, SCAN_BATCH, owner],
        )) as Array<{ seq: number; embedding: Uint8Array }>;
        for (const row of rows) {
          mine.push({ seq: Number(row.seq), score: similarity(vector, vectorFromBytes(row.embedding)) });
          after = Number(row.seq);
        }
        mine.sort((a, b) => b.score - a.score);
        mine.length = Math.min(mine.length, k);
        if (rows.length < SCAN_BATCH) break;
      }
      best.push(...mine);
    }
    return best.sort((a, b) => b.score - a.score).map((b) => b.seq);
  }

  /** Float vectors of these items, by seq. */
  async vectors(ctx: Ctx, seqs: readonly number[]): Promise<Map<number, Float32Array>> {
    const out = new Map<number, Float32Array>();
    if (!seqs.length) return out;
    const rows = (await this.query(ctx, `SELECT seq, embedding FROM ${VECTORS_TABLE} WHERE seq = ANY($1)`, [[...seqs]])) as Array<{ seq: number; embedding: Uint8Array }>;
    for (const row of rows) out.set(Number(row.seq), vectorFromBytes(row.embedding));
    return out;
  }
}
