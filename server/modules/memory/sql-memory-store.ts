import path from 'node:path';
import { ChangeCache } from '../../common/change-cache';
import type { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import type { Db } from '../../persistence/db';
import { resolveRankingOptions, type RankingOptions, type ResolvedRankingOptions } from './hybrid-ranking';
import type { MemoryEmbedder } from './memory-embedder';
import { defaultSearchThreads, MemorySearchPool } from './memory-search-pool';
import type { MemoryStore, MemoryStoreHit, MemoryStoreItem, MemoryStoreSearchOptions } from './memory-store';
import { contentHash, tokenize } from './memory-text';
import { Params, searchIndex, toDate, type IndexRow, type SearchRequest, type SearchSource } from './sql-memory-search';
import { SqliteVectorTables, type VectorWrite } from './sqlite-vector-tables';
import { nextMacrotask, RECONCILE_PAGE } from './reconcile-paging';
import { indexDifferences, type IndexDifferences } from './sql-index-differences';
import { PgVectorTables } from './pg-vector-tables';

// === SqlMemoryStore: the memory index in the app's own database
// SQLite: `memory_index` rows + FTS5 (`memory_fts`, rowid = seq) + `memory_vectors` (seq, owner, binary
// code and float vector; search scans the visible owners' codes, see sqlite-vector-tables.ts). PostgreSQL: `memory_index` with a
// GIN tsvector index + `memory_vectors` scanned exactly per owner (pg-vector-tables.ts). Search itself is
// sql-memory-search.ts; on a SQLite file it runs on search threads (memory-search-pool.ts), off the event loop.

export interface SqlMemoryStoreOptions extends RankingOptions {
  /** Embeddings for the vector index; null keeps the store keyword-only. */
  embedder?: MemoryEmbedder | null;
  logger: Logger;
  /**
   * Threads that run searches on a SQLite file (their own read-only connections); 0 searches on the app's
   * connection (as always on PostgreSQL and in-memory SQLite). @default 1 on 2 cores, 2 from 4 cores
   */
  searchThreads?: number;
  /**
   * Visible matches a query term is counted and ranked up to (see TERM_CAP in sql-memory-search.ts);
   * Infinity scores every match, as before the cap (the benchmarks' reference). @default TERM_CAP
   */
  termCap?: number;
}

const CHUNK = 400;
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
  /** The search thread's warm-up (first owner's codes loaded, one practice search), from `init` on. */
  private warming: Promise<void> = Promise.resolve();
  /** sqlite-vec is loaded (SQLite only). */
  private vecLoaded = false;
  private readonly vec: SqliteVectorTables | PgVectorTables;
  private readonly searchThreads: number;
  /** Search threads (SQLite file in WAL mode), from `init` on. */
  private pool: MemorySearchPool | null = null;
  private readonly termCap: number | undefined;
  /** Whether owners have indexed items, by owner set, while the index did not change in any process. */
  private readonly owned: ChangeCache<boolean>;

  constructor(
    private readonly db: Db,
    options: SqlMemoryStoreOptions,
  ) {
    this.pg = db.kind === 'postgres';
    this.owned = new ChangeCache(db.changes, ['memory']);
    this.ranking = resolveRankingOptions(options);
    this.embedder = options.embedder ?? null;
    this.logger = options.logger;
    this.searchThreads = Math.max(0, Math.floor(options.searchThreads ?? defaultSearchThreads()));
    this.termCap = options.termCap;
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
    await this.startSearchThreads(ctx);
    // The first search after start-up should not wait for the vector codes to load (seconds at 100k).
    if (this.pool && this.vec instanceof SqliteVectorTables && this.vec.dims !== null) this.warming = this.pool.warm(this.vec.dims, this.vec.generation, this.ranking);
  }

  /**
   * Opens the store, then waits for its search thread's warm-up (SQLite file with vectors: the first
   * owner's codes loaded and one practice search run, off the event loop), so that a search that comes next
   * is as fast as any. Never rejects for the warm-up: a thread that fails leaves the searches to report it.
   */
  async warm(ctx: Ctx): Promise<void> {
    await this.init(ctx);
    await this.warming;
  }

  /** Searches go to threads of their own when the database is a file that readers can share (WAL). */
  private async startSearchThreads(ctx: Ctx): Promise<void> {
    const file = (this.db.dataSource.options as { database?: unknown }).database;
    if (!this.searchThreads || typeof file !== 'string' || !file || file === ':memory:' || file.startsWith('file:')) return;
    const [mode] = (await this.query(ctx, 'PRAGMA journal_mode')) as Array<{ journal_mode: string }>;
    if (mode?.journal_mode?.toLowerCase() !== 'wal') return;
    const [busy] = (await this.query(ctx, 'PRAGMA busy_timeout')) as Array<{ timeout: number }>;
    this.pool = new MemorySearchPool({ file: path.resolve(file), busyTimeoutMs: Number(busy?.timeout ?? 5000) }, this.searchThreads, this.logger);
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
      this.db.changed(tx, 'memory');
    });
    this.committed(written, dropped);
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
      this.db.changed(tx, 'memory');
    });
    this.committed([], removed);
  }

  /** Every entry's update time, read in pages by seq with the event loop free between them (100k entries: ~100 ms in one read). */
  async entries(ctx: Ctx): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (let after = 0; ; ) {
      const p = new Params(this.pg);
      const rows = (await this.query(
        ctx,
        `SELECT seq, "itemId", "itemUpdatedAt" FROM memory_index WHERE seq > ${p.add(after)} ORDER BY seq LIMIT ${RECONCILE_PAGE}`,
        p.values,
      )) as Array<Pick<IndexRow, 'seq' | 'itemId' | 'itemUpdatedAt'>>;
      for (const r of rows) out.set(r.itemId, toDate(r.itemUpdatedAt).getTime());
      if (rows.length < RECONCILE_PAGE) return out;
      after = Number(rows[rows.length - 1]!.seq);
      await nextMacrotask();
    }
  }

  /**
   * The memories table against the index, joined by the database a page at a time (sql-index-differences.ts):
   * on a search thread when one runs (off the event loop, between searches), else on this connection (no
   * thread is started for it: a store without vectors warms none, and a small one compares in a few ms).
   */
  async differences(ctx: Ctx, signal?: AbortSignal): Promise<IndexDifferences> {
    await this.init(ctx);
    const pool = this.pool;
    if (pool?.usable && pool.running > 0) {
      try {
        // An abort (shutdown) stops waiting; the thread's answer is dropped.
        return await new Promise<IndexDifferences>((resolve, reject) => {
          const stop = () => resolve({ stale: [], gone: [] });
          if (signal?.aborted) return stop();
          signal?.addEventListener('abort', stop, { once: true });
          pool
            .differences()
            .then(resolve, reject)
            .finally(() => signal?.removeEventListener('abort', stop));
        });
      } catch (err) {
        if (signal?.aborted) return { stale: [], gone: [] };
        this.logger.warn({ err: (err as Error).message }, 'memory search thread failed — comparing the index on the main thread');
      }
    }
    return indexDifferences((sql, params) => this.query(ctx, sql, params), this.pg, { signal });
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
        // Entries removed or rewritten while their content was embedded (a delete, an erasure) get no vector.
        const s = new Params(this.pg);
        const still = new Set(
          ((await this.query(tx, `SELECT seq, "contentHash" FROM memory_index WHERE seq IN (${rows.map((r) => s.add(r.seq)).join(', ')})`, s.values)) as IndexRow[]).map(
            (r) => `${r.seq}:${r.contentHash}`,
          ),
        );
        for (let i = 0; i < rows.length; i++) {
          const row = rows[i]!;
          if (!still.has(`${row.seq}:${row.contentHash}`)) continue;
          written.push(await this.vec.put(tx, row.seq, row.owner, vectors[i]!));
          const u = new Params(this.pg);
          await this.query(tx, `UPDATE memory_index SET "vectorModel" = ${u.add(model)} WHERE seq = ${u.add(row.seq)} AND "contentHash" = ${u.add(row.contentHash)}`, u.values);
        }
      });
      this.committed(written, []);
      done += rows.length;
    }
    return done;
  }

  // === Search

  async search(ctx: Ctx, query: string, options: MemoryStoreSearchOptions): Promise<MemoryStoreHit[]> {
    if (options.owners !== 'all' && !options.owners.length) return [];
    await this.init(ctx);
    // No embeddings call for a caller who has nothing indexed (one index probe on the owner column).
    if (!(await this.anyOwned(ctx, options.owners))) return [];
    const model = this.vectorsEnabled && this.vecDims !== null ? this.embedder!.model : null;
    const embedded = model && query.trim() ? await this.embedder!.embedQuery(ctx, query) : null;
    const queryVector = embedded && embedded.length === this.vecDims ? embedded : null;
    const request: SearchRequest = { query, options, queryVector, model: queryVector ? model : null, ranking: this.ranking, termCap: this.termCap };
    if (this.pool?.usable && this.vec instanceof SqliteVectorTables) {
      try {
        await this.vec.checkOtherWriters(ctx);
        return await this.pool.search(request, this.vec.dims, this.vec.generation);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'memory search thread failed — searching on the main thread');
      }
    }
    return searchIndex(this.source(ctx), request);
  }

  get embedsQueries(): boolean {
    return this.vectorsEnabled && this.vecDims !== null;
  }

  /** Search threads running now (0 until the first search, on PostgreSQL, and with `searchThreads: 0`). */
  get searchThreadsRunning(): number {
    return this.pool?.running ?? 0;
  }

  async dispose(): Promise<void> {
    await this.pool?.dispose();
  }

  // === Internals

  private get vectorsEnabled(): boolean {
    return this.vecLoaded && !!this.embedder?.model;
  }

  private query(ctx: Ctx, sql: string, params: readonly unknown[] = []): Promise<unknown[]> {
    return (ctx.manager ?? this.db.dataSource.manager).query(sql, params as unknown[]);
  }

  /** Search on the app's own connection. */
  private source(ctx: Ctx): SearchSource {
    return {
      pg: this.pg,
      query: (sql, params) => this.query(ctx, sql, params),
      nearest: (vector, owners, k) => this.vec.nearest(ctx, vector, owners, k),
      vectors: (seqs) => this.vec.vectors(ctx, seqs),
    };
  }

  /** Whether any item of these owners is indexed (this process's answer while the index did not change). */
  private anyOwned(ctx: Ctx, owners: readonly string[] | 'all'): Promise<boolean> {
    return this.owned.get(owners === 'all' ? '' : [...owners].sort().join(' '), () => this.probeOwned(ctx, owners));
  }

  private async probeOwned(ctx: Ctx, owners: readonly string[] | 'all'): Promise<boolean> {
    const p = new Params(this.pg);
    const where = owners === 'all' ? '' : `WHERE owner IN (${p.list(owners)}) `;
    return ((await this.query(ctx, `SELECT 1 AS one FROM memory_index ${where}LIMIT 1`, p.values)) as unknown[]).length > 0;
  }

  /** Writes committed: the loaded codes of this thread and of the search threads take them. */
  private committed(written: readonly VectorWrite[], removed: readonly number[]): void {
    this.vec.committed(written, removed);
    this.pool?.apply(written, removed);
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
}
