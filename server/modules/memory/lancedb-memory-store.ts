import { mkdirSync } from 'node:fs';
import type * as LanceDb from '@lancedb/lancedb';
import type { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import { keywordScorer, rankCandidates, resolveRankingOptions, similarity, type RankCandidate, type RankingOptions, type ResolvedRankingOptions } from './hybrid-ranking';
import type { MemoryEmbedder } from './memory-embedder';
import type { MemoryStore, MemoryStoreHit, MemoryStoreItem, MemoryStoreSearchOptions } from './memory-store';
import { contentHash, queryTerms } from './memory-text';

// === LanceDbMemoryStore: memory index in a LanceDB table (`memory.vector_store: lancedb`)
// One table in `<data_dir>/lancedb` holds content, visibility and the vector of every item; keyword search
// uses LanceDB's full-text index, vector search its (prefiltered) vector search. The vector column has a
// fixed size, so the table is rebuilt when the embedding dimension changes (vectors come from the cache).
// Items indexed while no embedder works carry a zero vector and an empty `vector_model` and are left out of
// vector search until `syncVectors` embeds them.

export interface LanceDbMemoryStoreOptions extends RankingOptions {
  /** Folder of the LanceDB database. */
  dir: string;
  embedder?: MemoryEmbedder | null;
  logger: Logger;
  /** @default 'memories' */
  tableName?: string;
  /** Writes after which the table is compacted and the full-text index refreshed. @default 200 */
  optimizeEvery?: number;
}

interface LanceRow {
  id: string;
  owner: string;
  type: string;
  content: string;
  importance: number;
  updated_at: number;
  content_hash: string;
  vector_model: string;
  vector: number[] | Float32Array;
  _distance?: number;
}

/** A SQL string literal for LanceDB filters. */
function lit(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

function toF32(v: LanceRow['vector']): Float32Array {
  return v instanceof Float32Array ? v : Float32Array.from(v as ArrayLike<number>);
}

/** The optional LanceDB backend; loads `@lancedb/lancedb` (a native module) only when used. */
export class LanceDbMemoryStore implements MemoryStore {
  readonly name = 'lancedb';
  private readonly ranking: ResolvedRankingOptions;
  private readonly embedder: MemoryEmbedder | null;
  private readonly logger: Logger;
  private readonly tableName: string;
  private readonly optimizeEvery: number;
  private lance: typeof LanceDb | null = null;
  private conn: LanceDb.Connection | null = null;
  private table: LanceDb.Table | null = null;
  private dims: number | null = null;
  private initializing: Promise<void> | null = null;
  /** Writes run one at a time (LanceDB commits are versioned; serializing keeps them simple). */
  private writes: Promise<unknown> = Promise.resolve();
  private writesSinceOptimize = 0;

  constructor(private readonly options: LanceDbMemoryStoreOptions) {
    this.ranking = resolveRankingOptions(options);
    this.embedder = options.embedder ?? null;
    this.logger = options.logger;
    this.tableName = options.tableName ?? 'memories';
    this.optimizeEvery = options.optimizeEvery ?? 200;
  }

  init(_ctx?: Ctx): Promise<void> {
    this.initializing ??= (async () => {
      mkdirSync(this.options.dir, { recursive: true });
      this.lance = await import('@lancedb/lancedb');
      this.conn = await this.lance.connect(this.options.dir);
      if ((await this.conn.tableNames()).includes(this.tableName)) {
        this.table = await this.conn.openTable(this.tableName);
        const field = (await this.table.schema()).fields.find((f) => f.name === 'vector');
        this.dims = (field?.type as { listSize?: number } | undefined)?.listSize ?? null;
      }
    })();
    return this.initializing;
  }

  async dispose(): Promise<void> {
    await this.writes.catch(() => undefined);
    this.table?.close();
    this.conn?.close();
    this.table = null;
    this.conn = null;
  }

  // === Writes

  upsert(ctx: Ctx, items: readonly MemoryStoreItem[]): Promise<void> {
    if (!items.length) return Promise.resolve();
    return this.serialize(async () => {
      await this.init(ctx);
      const hashes = items.map((i) => contentHash(i.content));
      const model = this.embedder?.model ?? null;
      const before = await this.rowsById(items.map((i) => i.id));
      const vectors: Array<Float32Array | null> = items.map((item, i) => {
        const row = before.get(item.id);
        return row && model && row.vector_model === model && row.content_hash === hashes[i] ? toF32(row.vector) : null;
      });
      const need = items.map((_, i) => i).filter((i) => !vectors[i]);
      if (model && need.length) {
        const embedded = await this.embedder!.embedDocuments(ctx, need.map((i) => items[i]!.content), need.map((i) => hashes[i]!));
        if (embedded?.length) {
          await this.ensureDims(ctx, embedded[0]!.length);
          need.forEach((i, k) => (vectors[i] = embedded[k]!));
        }
      }
      const dims = this.dims ?? vectors.find((v) => v)?.length ?? 1;
      const rows: LanceRow[] = items.map((item, i) => {
        const v = vectors[i];
        const usable = v && v.length === dims;
        return {
          id: item.id,
          owner: item.owner,
          type: item.type,
          content: item.content,
          importance: item.importance,
          updated_at: item.updatedAt.getTime(),
          content_hash: hashes[i]!,
          vector_model: usable ? (model ?? '') : '',
          vector: usable ? Array.from(v) : new Array<number>(dims).fill(0),
        };
      });
      await this.write(rows, items.map((i) => i.id));
    });
  }

  delete(ctx: Ctx, ids: readonly string[]): Promise<void> {
    if (!ids.length) return Promise.resolve();
    return this.serialize(async () => {
      await this.init(ctx);
      if (!this.table) return;
      for (let i = 0; i < ids.length; i += 500) await this.table.delete(`id IN (${ids.slice(i, i + 500).map(lit).join(', ')})`);
      await this.maybeOptimize(ids.length);
    });
  }

  async entries(ctx: Ctx): Promise<Map<string, number>> {
    await this.init(ctx);
    if (!this.table) return new Map();
    const rows = (await this.table.query().select(['id', 'updated_at']).toArray()) as Array<Pick<LanceRow, 'id' | 'updated_at'>>;
    return new Map(rows.map((r) => [r.id, Number(r.updated_at)]));
  }

  /** Embeds in batches; each batch is written on its own, so searches and upserts never wait for the whole run. */
  async syncVectors(ctx: Ctx, signal?: AbortSignal): Promise<number> {
    await this.init(ctx);
    const model = this.embedder?.model;
    if (!model) return 0;
    let done = 0;
    for (let guard = 0; guard < 10_000 && !signal?.aborted && this.embedder!.available; guard++) {
      if (!this.table) break;
      const rows = (await this.table.query().where(`vector_model <> ${lit(model)}`).limit(256).toArray()) as LanceRow[];
      if (!rows.length) break;
      const vectors = await this.embedder!.embedDocuments(ctx, rows.map((r) => r.content), rows.map((r) => r.content_hash));
      if (!vectors) break;
      await this.serialize(async () => {
        await this.ensureDims(ctx, vectors[0]!.length);
        // Rows changed meanwhile (other content) keep their newer state.
        const current = await this.rowsById(rows.map((r) => r.id));
        const fresh = rows.map((r, i) => ({ r, v: vectors[i]! })).filter(({ r }) => current.get(r.id)?.content_hash === r.content_hash);
        if (fresh.length) {
          await this.write(
            fresh.map(({ r, v }) => ({ ...this.plain(current.get(r.id)!), vector_model: model, vector: Array.from(v) })),
            fresh.map(({ r }) => r.id),
          );
        }
      });
      done += rows.length;
    }
    return done;
  }

  // === Search

  async search(ctx: Ctx, query: string, options: MemoryStoreSearchOptions): Promise<MemoryStoreHit[]> {
    if (options.owners !== 'all' && !options.owners.length) return [];
    await this.init(ctx);
    const table = this.table;
    if (!table) return [];
    const limit = Math.max(1, Math.min(100, Math.floor(options.limit)));
    const filter = this.filter(options);
    const total = await table.countRows(filter);
    if (!total) return [];
    const terms = queryTerms(query);
    const pool = Math.max(limit * 8, 40);
    const candidates = new Map<string, LanceRow>();
    const docFreq = new Map<string, number>();
    if (terms.length) {
      for (const row of await this.fts(table, terms, filter, pool)) candidates.set(row.id, row);
      for (const term of terms) docFreq.set(term, (await this.fts(table, [term], filter, total, ['id', '_score'])).length);
    }
    const model = this.embedder?.model ?? null;
    const queryVector = model && this.dims && query.trim() ? await this.embedder!.embedQuery(ctx, query) : null;
    if (queryVector && queryVector.length === this.dims) {
      const rows = (await table
        .vectorSearch(queryVector)
        .distanceType('cosine')
        .where(`${filter} AND vector_model = ${lit(model!)}`)
        .limit(pool)
        .toArray()) as LanceRow[];
      for (const row of rows) candidates.set(row.id, row);
    }
    const owners = options.owners === 'all' ? null : new Set(options.owners);
    const list: RankCandidate[] = [];
    for (const row of candidates.values()) {
      if (owners && !owners.has(row.owner)) continue;
      const embedding = queryVector && row.vector_model === model ? toF32(row.vector) : null;
      list.push({
        id: row.id,
        owner: row.owner,
        type: row.type,
        content: row.content,
        importance: Number(row.importance),
        updatedAt: new Date(Number(row.updated_at)),
        vector: queryVector && embedding ? similarity(queryVector, embedding) : null,
        embedding,
      });
    }
    return rankCandidates(list, keywordScorer(terms, { total, docFreq }), { ...this.ranking, limit, minScore: options.minScore ?? 0, vectorOnlyMinSimilarity: options.vectorOnlyMinSimilarity });
  }

  // === Internals

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.writes.then(fn, fn);
    this.writes = run.catch(() => undefined);
    return run;
  }

  private filter(options: MemoryStoreSearchOptions): string {
    const parts: string[] = [];
    if (options.owners !== 'all') parts.push(`owner IN (${options.owners.map(lit).join(', ')})`);
    if (options.types?.length) parts.push(`type IN (${options.types.map(lit).join(', ')})`);
    if (options.excludeTypes?.length) parts.push(`type NOT IN (${options.excludeTypes.map(lit).join(', ')})`);
    return parts.length ? parts.join(' AND ') : 'true';
  }

  private async fts(table: LanceDb.Table, terms: readonly string[], filter: string, limit: number, columns?: string[]): Promise<LanceRow[]> {
    const { MatchQuery, Operator } = this.lance!;
    let q = table.search(new MatchQuery(terms.join(' '), 'content', { operator: Operator.Or }), 'fts').where(filter).limit(Math.max(1, limit));
    if (columns) q = q.select(columns);
    return (await q.toArray()) as LanceRow[];
  }

  private async rowsById(ids: readonly string[]): Promise<Map<string, LanceRow>> {
    const out = new Map<string, LanceRow>();
    if (!this.table) return out;
    for (let i = 0; i < ids.length; i += 500) {
      const part = ids.slice(i, i + 500);
      const rows = (await this.table.query().where(`id IN (${part.map(lit).join(', ')})`).limit(part.length).toArray()) as LanceRow[];
      for (const row of rows) out.set(row.id, row);
    }
    return out;
  }

  private plain(row: LanceRow): LanceRow {
    return {
      id: row.id,
      owner: row.owner,
      type: row.type,
      content: row.content,
      importance: Number(row.importance),
      updated_at: Number(row.updated_at),
      content_hash: row.content_hash,
      vector_model: row.vector_model,
      vector: Array.from(toF32(row.vector)),
    };
  }

  /** Replaces rows by id (creating the table and its full-text index on first use). */
  private async write(rows: LanceRow[], ids: readonly string[]): Promise<void> {
    if (!this.table) {
      this.table = await this.conn!.createTable(this.tableName, rows as unknown as Record<string, unknown>[]);
      this.dims = rows[0]!.vector.length;
      await this.table.createIndex('content', {
        config: this.lance!.Index.fts({ withPosition: false, lowercase: true, asciiFolding: true, stem: false, removeStopWords: false }),
      });
      return;
    }
    for (let i = 0; i < ids.length; i += 500) await this.table.delete(`id IN (${ids.slice(i, i + 500).map(lit).join(', ')})`);
    await this.table.add(rows as unknown as Record<string, unknown>[]);
    await this.maybeOptimize(rows.length);
  }

  private async maybeOptimize(writes: number): Promise<void> {
    this.writesSinceOptimize += writes;
    if (this.writesSinceOptimize < this.optimizeEvery || !this.table) return;
    this.writesSinceOptimize = 0;
    try {
      await this.table.optimize();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'LanceDB optimize failed');
    }
  }

  /** Rebuilds the table when vectors of another dimension arrive (a new embedding model). */
  private async ensureDims(ctx: Ctx, dims: number): Promise<void> {
    if (!this.table || this.dims === dims) return;
    this.logger.info({ from: this.dims, to: dims }, 'embedding dimension changed — rebuilding the LanceDB memory table');
    const old = (await this.table.query().toArray()) as LanceRow[];
    const model = this.embedder?.model ?? '';
    const cached = old.length ? await this.embedder?.embedDocuments(ctx, old.map((r) => r.content), old.map((r) => r.content_hash)) : null;
    const rows = old.map((r, i) => {
      const v = cached?.[i];
      return { ...this.plain(r), vector_model: v ? model : '', vector: v ? Array.from(v) : new Array<number>(dims).fill(0) };
    });
    this.table.close();
    await this.conn!.dropTable(this.tableName);
    this.table = null;
    this.dims = dims;
    if (rows.length) await this.write(rows, []);
  }
}
