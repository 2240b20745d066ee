import { keywordScorer, rankCandidates, similarity, type RankCandidate, type ResolvedRankingOptions } from './hybrid-ranking';
import type { MemoryStoreHit, MemoryStoreSearchOptions } from './memory-store';
import { queryTerms } from './memory-text';

// === Search of SqlMemoryStore's index: candidates by keyword (FTS5 / tsvector) and by vector (binary codes,
// re-ranked by exact cosine), then the hybrid ranking. Runs over a `SearchSource`: the app's own connection
// (PostgreSQL, or SQLite when no search thread runs) or the read-only connection of a search thread
// (memory-search-worker.ts), so it imports nothing heavier than the ranking (a worker must not load TypeORM).

/** One `memory_index` row. */
export interface IndexRow {
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
export class Params {
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

/** A `memory_index` date: a Date (PostgreSQL) or TypeORM's SQLite text ('YYYY-MM-DD HH:MM:SS.SSS', UTC). */
export function toDate(value: Date | string): Date {
  if (value instanceof Date) return value;
  return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(' ', 'T')}Z`);
}

/** Candidates of the coarse (binary code) step of vector search, re-ranked by exact cosine. */
const COARSE_CANDIDATES = 400;
/** Keyword matches ranked by FTS5 alone per candidate wanted, before the visibility filter. */
const KEYWORD_OVERSAMPLE = 4;

/** Where a search reads: SQL on one connection, and the vector table's coarse step and float vectors. */
export interface SearchSource {
  readonly pg: boolean;
  query(sql: string, params?: readonly unknown[]): Promise<unknown[]>;
  /** Seqs of the nearest codes among `owners`, nearest first. */
  nearest(vector: Float32Array, owners: readonly string[] | 'all', k: number): Promise<number[]>;
  /** Float vectors of these items, by seq. */
  vectors(seqs: readonly number[]): Promise<Map<number, Float32Array>>;
}

/** One search: the text, what the caller may see, and the query's embedding when vectors take part. */
export interface SearchRequest {
  query: string;
  options: MemoryStoreSearchOptions;
  /** Embedding of `query` by `model`, of the vector table's dimension; null: keyword-only. */
  queryVector: Float32Array | null;
  model: string | null;
  ranking: ResolvedRankingOptions;
}

/** Hits for the request, best first, only among `options.owners`. */
export async function searchIndex(source: SearchSource, request: SearchRequest): Promise<MemoryStoreHit[]> {
  const { options, queryVector, model } = request;
  if (options.owners !== 'all' && !options.owners.length) return [];
  const limit = Math.max(1, Math.min(100, Math.floor(options.limit)));
  const total = await visibleCount(source, options);
  if (!total) return [];
  const terms = queryTerms(request.query);
  const poolSize = Math.max(limit * 8, 40);
  const candidates = new Map<string, IndexRow>();
  const docFreq = new Map<string, number>();
  if (terms.length) {
    for (const row of await keywordRows(source, terms, options, poolSize)) candidates.set(row.itemId, row);
    for (const term of terms) docFreq.set(term, await termCount(source, term, options));
  }
  // Vector side: the nearest binary codes among the visible owners, re-ranked by exact cosine over their
  // float vectors; the best `poolSize` that pass the filters are candidates.
  let embeddings = new Map<number, Float32Array>();
  if (queryVector && model) {
    const coarse = await source.nearest(queryVector, options.owners, Math.max(COARSE_CANDIDATES, poolSize * 5));
    embeddings = await source.vectors(coarse.slice(0, 4 * Math.max(COARSE_CANDIDATES, poolSize * 5)));
    const ranked = [...embeddings].map(([seq, v]) => ({ seq, sim: similarity(queryVector, v) })).sort((a, b) => b.sim - a.sim);
    const order = new Map(ranked.map((r, i) => [r.seq, i]));
    const best = ranked.slice(0, poolSize * 2).map((r) => r.seq);
    if (best.length) {
      const p = new Params(source.pg);
      const rows = (await source.query(
        `SELECT i.* FROM memory_index i WHERE i.seq IN (${p.list(best)}) AND ${filterSql(p, options)} AND i."vectorModel" = ${p.add(model)}`,
        p.values,
      )) as IndexRow[];
      rows.sort((a, b) => order.get(a.seq)! - order.get(b.seq)!);
      for (const row of rows.slice(0, poolSize)) candidates.set(row.itemId, row);
    }
    const missing = [...candidates.values()].filter((r) => r.vectorModel === model && !embeddings.has(r.seq)).map((r) => r.seq);
    for (const [seq, v] of await source.vectors(missing)) embeddings.set(seq, v);
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
  return rankCandidates(list, keywordScorer(terms, { total, docFreq }), {
    ...request.ranking,
    limit,
    minScore: options.minScore ?? 0,
    vectorOnlyMinSimilarity: options.vectorOnlyMinSimilarity,
  });
}

function filterSql(p: Params, options: MemoryStoreSearchOptions): string {
  const parts: string[] = [];
  if (options.owners !== 'all') parts.push(`i.owner IN (${p.list(options.owners)})`);
  if (options.types?.length) parts.push(`i.type IN (${p.list(options.types)})`);
  if (options.excludeTypes?.length) parts.push(`i.type NOT IN (${p.list(options.excludeTypes)})`);
  return parts.length ? parts.join(' AND ') : '1 = 1';
}

async function visibleCount(source: SearchSource, options: MemoryStoreSearchOptions): Promise<number> {
  const p = new Params(source.pg);
  const [row] = (await source.query(`SELECT COUNT(*) AS n FROM memory_index i WHERE ${filterSql(p, options)}`, p.values)) as Array<{ n: number | string }>;
  return Number(row?.n ?? 0);
}

async function keywordRows(source: SearchSource, terms: readonly string[], options: MemoryStoreSearchOptions, limit: number): Promise<IndexRow[]> {
  const p = new Params(source.pg);
  if (source.pg) {
    // Terms are letters and digits only, so joining them with | is a valid tsquery.
    const tsq = `to_tsquery('simple', ${p.add(terms.join(' | '))})`;
    return (await source.query(
      `SELECT i.* FROM memory_index i WHERE to_tsvector('simple', i."searchText") @@ ${tsq} AND ${filterSql(p, options)} ` +
        `ORDER BY ts_rank(to_tsvector('simple', i."searchText"), ${tsq}) DESC LIMIT ${limit}`,
      p.values,
    )) as IndexRow[];
  }
  const match = terms.map((t) => `"${t}"`).join(' OR ');
  // Bounded first: FTS5 ranks on its own (no join per match) and only the best few are joined and
  // filtered. When filtering leaves too few (most of the best belong to others), the exact query runs.
  const inner = limit * KEYWORD_OVERSAMPLE;
  const bounded = (await source.query(
    `SELECT i.* FROM (SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH ${p.add(match)} ORDER BY rank LIMIT ${inner}) f ` +
      `JOIN memory_index i ON i.seq = f.rowid WHERE ${filterSql(p, options)} ORDER BY f.rank LIMIT ${limit}`,
    p.values,
  )) as IndexRow[];
  if (bounded.length >= limit) return bounded;
  const [{ n }] = (await source.query(`SELECT COUNT(*) AS n FROM (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? LIMIT ${inner})`, [match])) as Array<{ n: number }>;
  if (Number(n) < inner) return bounded; // every match was looked at
  const q = new Params(false);
  return (await source.query(
    `SELECT i.* FROM memory_fts JOIN memory_index i ON i.seq = memory_fts.rowid WHERE memory_fts MATCH ${q.add(match)} AND ${filterSql(q, options)} ` +
      `ORDER BY bm25(memory_fts) LIMIT ${limit}`,
    q.values,
  )) as IndexRow[];
}

/** Visible items containing `term`. */
async function termCount(source: SearchSource, term: string, options: MemoryStoreSearchOptions): Promise<number> {
  const p = new Params(source.pg);
  const sql = source.pg
    ? `SELECT COUNT(*) AS n FROM memory_index i WHERE to_tsvector('simple', i."searchText") @@ to_tsquery('simple', ${p.add(term)}) AND ${filterSql(p, options)}`
    : `SELECT COUNT(*) AS n FROM memory_fts JOIN memory_index i ON i.seq = memory_fts.rowid WHERE memory_fts MATCH ${p.add(`"${term}"`)} AND ${filterSql(p, options)}`;
  const [row] = (await source.query(sql, p.values)) as Array<{ n: number | string }>;
  return Number(row?.n ?? 0);
}
