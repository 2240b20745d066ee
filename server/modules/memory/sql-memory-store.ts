import type { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import type { Db } from '../../persistence/db';
import { keywordScorer, rankCandidates, resolveRankingOptions, similarity, type RankCandidate, type RankingOptions, type ResolvedRankingOptions } from './hybrid-ranking';
import type { MemoryEmbedder } from './memory-embedder';
import type { MemoryStore, MemoryStoreHit, MemoryStoreItem, MemoryStoreSearchOptions } from './memory-store';
import { contentHash, queryTerms, tokenize } from './memory-text';
import { SqliteVectorTables, type VectorWrite } from './sqlite-vector-tables';
import { PgVectorTables } from './pg-vector-tables';

// === SqlMemoryStore: the memory index in the app's own database
// SQLite: `memory_index` rows + FTS5 (`memory_fts`, rowid = seq) + sqlite-vec (`memory_vec`, rowid = seq,
// partitioned by owner so a KNN query only ever walks one owner's vectors). PostgreSQL: `memory_index` with a
// GIN tsvector index + `memory_vectors` scanned exactly per owner (pg-vector-tables.ts).

export interface SqlMemoryStoreOptions extends RankingOptions {
  /** Embeddings for the vector index; null keeps the store keyword-only. */
  embedder?: MemoryEmbedder | null;
  logger: Logger;
}

interface IndexRow {
  seq: number;
  itemId: string;
  owner: string;
  type: string;
  content: string;
  importance: number;
  itemUpdatedAt: Date | string;
  contentHash: string;
  vectorModel: string | null;
}

/** Builds `?` (SQLite) or `$n` (PostgreSQL) placeholders in the order the SQL text is written. */
class Params {
  readonly values: unknown[] = [];
  constructor(private readonly pg: boolean) {}
  add(value: unknown): string {
    this.values.push(value);
    return this.pg ? `$${this.values.length}` : '?';
  }
  list(values: readonly unknown[]): string {
    return values.map((v) => this.add(v)).join(', ');
  }
}

const CHUNK = 400;
/** Candidates of the coarse (binary code) step of vector search, re-ranked by exact cosine. */
const COARSE_CANDIDATES = 400;
/** Items per multi-row INSERT of an upsert (9 parameters each). */
const UPSERT_ROWS = 200;

function chunks<T>(list: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** TypeORM's SQLite datetime text ('YYYY-MM-DD HH:MM:SS.SSS', UTC). */
function sqliteDate(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', '');
}

function toDate(value: Date | string): Date {
  if (value instanceof Date) return value;
  return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(' ', 'T')}Z`);
}

/**
 * The default MemoryStore (`memory.vector_store: sqlite-vec`): keyword search with FTS5 (SQLite) or a
 * tsvector index (PostgreSQL), vector search with sqlite-vec on SQLite when an embedder works.
 */
export class SqlMemoryStore implements MemoryStore {
  private readonly pg: boolean;
  private readonly ranking: ResolvedRankingOptions;
  private readonly embedder: MemoryEmbedder | null;
  private readonly logger: Logger;
  private initializing: Promise<void> | null = null;
  /** sqlite-vec is loaded (SQLite only). */
  private vecLoaded = false;
  private readonly vec: SqliteVectorTables | PgVectorTables;

  constructor(
    private readonly db: Db,
    options: SqlMemoryStoreOptions,
  ) {
    this.pg = db.kind === 'postgres';
    this.ranking = resolveRankingOptions(options);
    this.embedder = options.embedder ?? null;
    this.logger = options.logger;
    const query = (ctx: Ctx, sql: string, params?: readonly unknown[]) => this.query(ctx, sql, params);
    this.vec = this.pg ? new PgVectorTables(db, query, this.logger) : new SqliteVectorTables(db, query, this.logger);
  }

  /** Dimension of the vector tables, null when there are none. */
  private get vecDims(): number | null {
    return this.vec.dims;
  }

  get name(): string {
    return this.pg ? 'sql-scan' : 'sqlite-vec';
  }

  init(ctx: Ctx): Promise<void> {
    this.initializing ??= this.open(ctx);
    return this.initializing;
  }

  private async open(ctx: Ctx): Promise<void> {
    if (this.pg) {
      // Full-text search plus an exact scan of the stored vectors (no extension needed).
      await this.vec.open(ctx);
      this.vecLoaded = true;
      return;
    }
    try {
      await this.query(ctx, 'SELECT vec_version() AS v');
      this.vecLoaded = true;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'sqlite-vec is not loaded — memory search is keyword-only');
    }
    if (this.vecLoaded) await this.vec.open(ctx);
  }

  // === Writes

  async upsert(ctx: Ctx, items: readonly MemoryStoreItem[]): Promise<void> {
    if (!items.length) return;
    await this.init(ctx);
    const hashes = items.map((i) => contentHash(i.content));
    const before = await this.rowsByItemId(ctx, items.map((i) => i.id));
    // Vectors first and outside the transaction: an embeddings call must never hold the database.
    const vectors: Array<Float32Array | null> = items.map(() => null);
    const model = this.vectorsEnabled ? this.embedder!.model : null;
    if (model) {
      const need = items
        .map((item, i) => ({ item, i }))
        .filter(({ item, i }) => {
          const row = before.get(item.id);
          return !(row && row.contentHash === hashes[i] && row.vectorModel === model && row.owner === item.owner);
        });
      const embedded = need.length ? await this.embedder!.embedDocuments(ctx, need.map((n) => n.item.content), need.map((n) => hashes[n.i]!)) : [];
      if (embedded?.length) {
        await this.vec.ensure(ctx, embedded[0]!.length);
        need.forEach((n, k) => (vectors[n.i] = embedded[k]!));
      }
    }
    // The last of several items with one id wins (as if they were written one after the other).
    const last = new Map(items.map((item, i) => [item.id, i]));
    const order = [...last.values()].sort((x, y) => x - y);
    const written: VectorWrite[] = [];
    const dropped: number[] = [];
    await this.db.withTransaction(ctx, async (tx) => {
      written.length = dropped.length = 0;
      const current = await this.rowsByItemId(tx, order.map((i) => items[i]!.id));
      for (const part of chunks(order, UPSERT_ROWS)) {
        const plan = part.map((i) => {
          const item = items[i]!;
          const row = current.get(item.id);
          const contentChanged = !row || row.contentHash !== hashes[i];
          const keepVector = !!row && !contentChanged && row.owner === item.owner && row.vectorModel !== null;
          const vector = vectors[i]!;
          return { item, row, hash: hashes[i]!, vector, contentChanged, keepVector, vectorModel: vector ? model : keepVector ? row!.vectorModel : null };
        });
        const p = new Params(this.pg);
        const values = plan.map(
          ({ item, hash, vectorModel }) =>
            `(${p.add(item.id)}, ${p.add(item.owner)}, ${p.add(item.type)}, ${p.add(item.content)}, ${p.add(this.pg ? tokenize(item.content).join(' ') : '')}, ${p.add(item.importance)}, ` +
            `${p.add(this.pg ? item.updatedAt : sqliteDate(item.updatedAt))}, ${p.add(hash)}, ${p.add(vectorModel)})`,
        );
        const sql =
          `INSERT INTO memory_index ("itemId", owner, type, content, "searchText", importance, "itemUpdatedAt", "contentHash", "vectorModel") VALUES ${values.join(', ')} ` +
          `ON CONFLICT ("itemId") DO UPDATE SET owner = excluded.owner, type = excluded.type, content = excluded.content, "searchText" = excluded."searchText", ` +
          `importance = excluded.importance, "itemUpdatedAt" = excluded."itemUpdatedAt", "contentHash" = excluded."contentHash", ` +
          `"vectorModel" = excluded."vectorModel" RETURNING seq, "itemId"`;
        const seqOf = new Map(((await this.query(tx, sql, p.values)) as Array<{ seq: number; itemId: string }>).map((r) => [r.itemId, Number(r.seq)]));
        const changed = this.pg ? [] : plan.filter((x) => x.contentChanged);
        const stale = changed.filter((x) => x.row).map((x) => seqOf.get(x.item.id)!);
        if (stale.length) await this.query(tx, `DELETE FROM memory_fts WHERE rowid IN (${stale.map(() => '?').join(', ')})`, stale);
        if (changed.length) {
          const fts = changed.flatMap((x) => [seqOf.get(x.item.id)!, x.item.content]);
          await this.query(tx, `INSERT INTO memory_fts (rowid, content) VALUES ${changed.map(() => '(?, ?)').join(', ')}`, fts);
        }
        const unvectored = this.vecDims === null ? [] : plan.filter((x) => x.row && !x.keepVector).map((x) => seqOf.get(x.item.id)!);
        if (unvectored.length) {
          await this.vec.remove(tx, unvectored);
          dropped.push(...unvectored);
        }
        const puts = plan.filter((x) => x.vector && this.vecDims === x.vector.length).map((x) => ({ seq: seqOf.get(x.item.id)!, owner: x.item.owner, vector: x.vector! }));
        written.push(...(await this.vec.putMany(tx, puts)));
      }
    });
    this.vec.committed(written, dropped);
  }

  async delete(ctx: Ctx, ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    await this.init(ctx);
    let removed: number[] = [];
    await this.db.withTransaction(ctx, async (tx) => {
      const rows = await this.rowsByItemId(tx, ids);
      const seqs = [...rows.values()].map((r) => r.seq);
      removed = seqs;
      for (const part of chunks(seqs)) {
        if (!this.pg) await this.query(tx, `DELETE FROM memory_fts WHERE rowid IN (${part.map(() => '?').join(', ')})`, part);
        if (this.vecDims !== null) await this.vec.remove(tx, part);
        const p = new Params(this.pg);
        await this.query(tx, `DELETE FROM memory_index WHERE seq IN (${p.list(part)})`, p.values);
      }
    });
    this.vec.committed([], removed);
  }

  async entries(ctx: Ctx): Promise<Map<string, number>> {
    const rows = (await this.query(ctx, 'SELECT "itemId", "itemUpdatedAt" FROM memory_index')) as Array<Pick<IndexRow, 'itemId' | 'itemUpdatedAt'>>;
    return new Map(rows.map((r) => [r.itemId, toDate(r.itemUpdatedAt).getTime()]));
  }

  async syncVectors(ctx: Ctx, signal?: AbortSignal): Promise<number> {
    await this.init(ctx);
    const model = this.vectorsEnabled ? this.embedder!.model : null;
    if (!model) return 0;
    let done = 0;
    for (let guard = 0; guard < 10_000 && !signal?.aborted && this.embedder!.available; guard++) {
      const q = new Params(this.pg);
      const rows = (await this.query(
        ctx,
        `SELECT seq, "itemId", owner, content, "contentHash" FROM memory_index WHERE "vectorModel" IS NULL OR "vectorModel" <> ${q.add(model)} ORDER BY seq LIMIT 256`,
        q.values,
      )) as IndexRow[];
      if (!rows.length) break;
      const vectors = await this.embedder!.embedDocuments(ctx, rows.map((r) => r.content), rows.map((r) => r.contentHash));
      if (!vectors) break;
      await this.vec.ensure(ctx, vectors[0]!.length);
      const written: VectorWrite[] = [];
      await this.db.withTransaction(ctx, async (tx) => {
        written.length = 0;
        for (let i = 0; i < rows.length; i++) {
          const row = rows[i]!;
          written.push(await this.vec.put(tx, row.seq, row.owner, vectors[i]!));
          const u = new Params(this.pg);
          await this.query(tx, `UPDATE memory_index SET "vectorModel" = ${u.add(model)} WHERE seq = ${u.add(row.seq)} AND "contentHash" = ${u.add(row.contentHash)}`, u.values);
        }
      });
      this.vec.committed(written);
      done += rows.length;
    }
    return done;
  }

  // === Search

  async search(ctx: Ctx, query: string, options: MemoryStoreSearchOptions): Promise<MemoryStoreHit[]> {
    if (options.owners !== 'all' && !options.owners.length) return [];
    await this.init(ctx);
    const limit = Math.max(1, Math.min(100, Math.floor(options.limit)));
    const total = await this.visibleCount(ctx, options);
    if (!total) return [];
    const terms = queryTerms(query);
    const poolSize = Math.max(limit * 8, 40);
    const candidates = new Map<string, IndexRow>();
    const docFreq = new Map<string, number>();
    if (terms.length) {
      for (const row of await this.keywordRows(ctx, terms, options, poolSize)) candidates.set(row.itemId, row);
      for (const term of terms) docFreq.set(term, await this.termCount(ctx, term, options));
    }
    // Vector side: the nearest binary codes among the visible owners, re-ranked by exact cosine over their
    // float vectors; the best `poolSize` that pass the filters are candidates.
    const model = this.vectorsEnabled && this.vecDims !== null ? this.embedder!.model : null;
    const queryVector = model && query.trim() ? await this.embedder!.embedQuery(ctx, query) : null;
    let embeddings = new Map<number, Float32Array>();
    if (queryVector && queryVector.length === this.vecDims) {
      const coarse = await this.vec.nearest(ctx, queryVector, options.owners, Math.max(COARSE_CANDIDATES, poolSize * 5));
      embeddings = await this.vec.vectors(ctx, coarse.slice(0, 4 * Math.max(COARSE_CANDIDATES, poolSize * 5)));
      const ranked = [...embeddings].map(([seq, v]) => ({ seq, sim: similarity(queryVector, v) })).sort((a, b) => b.sim - a.sim);
      const order = new Map(ranked.map((r, i) => [r.seq, i]));
      const best = ranked.slice(0, poolSize * 2).map((r) => r.seq);
      if (best.length) {
        const p = new Params(this.pg);
        const rows = (await this.query(
          ctx,
          `SELECT i.* FROM memory_index i WHERE i.seq IN (${p.list(best)}) AND ${this.filterSql(p, options)} AND i."vectorModel" = ${p.add(model)}`,
          p.values,
        )) as IndexRow[];
        rows.sort((a, b) => order.get(a.seq)! - order.get(b.seq)!);
        for (const row of rows.slice(0, poolSize)) candidates.set(row.itemId, row);
      }
      const missing = [...candidates.values()].filter((r) => r.vectorModel === model && !embeddings.has(r.seq)).map((r) => r.seq);
      for (const [seq, v] of await this.vec.vectors(ctx, missing)) embeddings.set(seq, v);
    }
    const owners = options.owners === 'all' ? null : new Set(options.owners);
    const list: RankCandidate[] = [];
    for (const row of candidates.values()) {
      if (owners && !owners.has(row.owner)) continue; // never trust a virtual table's filtering alone
      const embedding = embeddings.get(row.seq) ?? null;
      list.push({
        id: row.itemId,
        owner: row.owner,
        type: row.type,
        content: row.content,
        importance: Number(row.importance),
        updatedAt: toDate(row.itemUpdatedAt),
        vector: queryVector && embedding ? similarity(queryVector, embedding) : null,
        embedding,
      });
    }
    return rankCandidates(list, keywordScorer(terms, { total, docFreq }), { ...this.ranking, limit, minScore: options.minScore ?? 0, vectorOnlyMinSimilarity: options.vectorOnlyMinSimilarity });
  }

  // === Internals

  private get vectorsEnabled(): boolean {
    return this.vecLoaded && !!this.embedder?.model;
  }

  private query(ctx: Ctx, sql: string, params: readonly unknown[] = []): Promise<unknown[]> {
    return (ctx.manager ?? this.db.dataSource.manager).query(sql, params as unknown[]);
  }

  private async rowsByItemId(ctx: Ctx, ids: readonly string[]): Promise<Map<string, IndexRow>> {
    const out = new Map<string, IndexRow>();
    for (const part of chunks([...new Set(ids)])) {
      const p = new Params(this.pg);
      const rows = (await this.query(
        ctx,
        `SELECT seq, "itemId", owner, "contentHash", "vectorModel" FROM memory_index WHERE "itemId" IN (${p.list(part)})`,
        p.values,
      )) as IndexRow[];
      for (const row of rows) out.set(row.itemId, row);
    }
    return out;
  }

  private filterSql(p: Params, options: MemoryStoreSearchOptions): string {
    const parts: string[] = [];
    if (options.owners !== 'all') parts.push(`i.owner IN (${p.list(options.owners)})`);
    if (options.types?.length) parts.push(`i.type IN (${p.list(options.types)})`);
    if (options.excludeTypes?.length) parts.push(`i.type NOT IN (${p.list(options.excludeTypes)})`);
    return parts.length ? parts.join(' AND ') : '1 = 1';
  }

  private async visibleCount(ctx: Ctx, options: MemoryStoreSearchOptions): Promise<number> {
    const p = new Params(this.pg);
    const [row] = (await this.query(ctx, `SELECT COUNT(*) AS n FROM memory_index i WHERE ${this.filterSql(p, options)}`, p.values)) as Array<{ n: number | string }>;
    return Number(row?.n ?? 0);
  }

  private async keywordRows(ctx: Ctx, terms: readonly string[], options: MemoryStoreSearchOptions, limit: number): Promise<IndexRow[]> {
    const p = new Params(this.pg);
    if (this.pg) {
      // Terms are letters and digits only, so joining them with | is a valid tsquery.
      const tsq = `to_tsquery('simple', ${p.add(terms.join(' | '))})`;
      return (await this.query(
        ctx,
        `SELECT i.* FROM memory_index i WHERE to_tsvector('simple', i."searchText") @@ ${tsq} AND ${this.filterSql(p, options)} ` +
          `ORDER BY ts_rank(to_tsvector('simple', i."searchText"), ${tsq}) DESC LIMIT ${limit}`,
        p.values,
      )) as IndexRow[];
    }
    const match = terms.map((t) => `"${t}"`).join(' OR ');
    return (await this.query(
      ctx,
      `SELECT i.* FROM memory_fts JOIN memory_index i ON i.seq = memory_fts.rowid WHERE memory_fts MATCH ${p.add(match)} AND ${this.filterSql(p, options)} ` +
        `ORDER BY bm25(memory_fts) LIMIT ${limit}`,
      p.values,
    )) as IndexRow[];
  }

  /** Visible items containing `term`. */
  private async termCount(ctx: Ctx, term: string, options: MemoryStoreSearchOptions): Promise<number> {
    const p = new Params(this.pg);
    const sql = this.pg
      ? `SELECT COUNT(*) AS n FROM memory_index i WHERE to_tsvector('simple', i."searchText") @@ to_tsquery('simple', ${p.add(term)}) AND ${this.filterSql(p, options)}`
      : `SELECT COUNT(*) AS n FROM memory_fts JOIN memory_index i ON i.seq = memory_fts.rowid WHERE memory_fts MATCH ${p.add(`"${term}"`)} AND ${this.filterSql(p, options)}`;
    const [row] = (await this.query(ctx, sql, p.values)) as Array<{ n: number | string }>;
    return Number(row?.n ?? 0);
  }
}
