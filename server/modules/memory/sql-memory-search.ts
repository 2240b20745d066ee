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
  constructor(readonly pg: boolean) {}
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

/** Columns of an `IndexRow` (not the search text, which only the full-text index reads). */
const INDEX_COLUMNS = 'i.seq, i."itemId", i.owner, i.type, i.content, i.importance, i."itemUpdatedAt", i."contentHash", i."vectorModel"';

/** Candidates of the coarse (binary code) step of vector search, re-ranked by exact cosine. */
const COARSE_CANDIDATES = 250;
/**
 * Visible matches a query term is counted up to. A term with more (a word found in most rows) is not
 * counted to the end: its count is estimated from the newest TERM_CAP matches (see `termStats`), and its
 * keyword candidates are the newest matches, not the best of all of them by rank (see `keywordRows`). So
 * the keyword side reads at most a few thousand index entries per term, whatever the text.
 */
export const TERM_CAP = 1000;

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
  /** Visible matches a term is counted up to (TERM_CAP); Infinity scores every match (benchmarks' reference). */
  termCap?: number;
}

/** Hits for the request, best first, only among `options.owners`. */
export async function searchIndex(source: SearchSource, request: SearchRequest): Promise<MemoryStoreHit[]> {
  const { queryVector, model } = request;
  if (request.options.owners !== 'all' && !request.options.owners.length) return [];
  const options = await withVisibleTypes(source, request.options);
  if (!options) return [];
  const limit = Math.max(1, Math.min(100, Math.floor(options.limit)));
  const total = await visibleCount(source, options);
  if (!total) return [];
  const terms = queryTerms(request.query);
  const poolSize = Math.max(limit * 8, 40);
  const candidates = new Map<string, IndexRow>();
  const docFreq = new Map<string, number>();
  if (terms.length) {
    const stats: TermStat[] = [];
    for (const term of terms) stats.push(await termStats(source, term, options, total, request.termCap ?? TERM_CAP));
    for (const stat of stats) docFreq.set(stat.term, stat.df);
    for (const row of await keywordRows(source, stats, options, poolSize)) candidates.set(row.itemId, row);
  }
  // Vector side: the nearest binary codes among the visible owners, re-ranked by exact cosine over their
  // float vectors; the best `2 × poolSize` that pass the filters are candidates (when a query's words are in
  // most rows, the keyword score of the nearest items is what tells them apart).
  let embeddings = new Map<number, Float32Array>();
  if (queryVector && model) {
    const coarseK = Math.max(COARSE_CANDIDATES, poolSize * 5);
    // Nearest first; ties at the cut-off distance may add a few more, which are left out.
    const coarse = await source.nearest(queryVector, options.owners, coarseK);
    embeddings = await source.vectors(coarse.slice(0, coarseK));
    const ranked = [...embeddings].map(([seq, v]) => ({ seq, sim: similarity(queryVector, v) })).sort((a, b) => b.sim - a.sim);
    const order = new Map(ranked.map((r, i) => [r.seq, i]));
    const best = ranked.slice(0, poolSize * 2).map((r) => r.seq);
    if (best.length) {
      const p = new Params(source.pg);
      const rows = (await source.query(
        `SELECT ${INDEX_COLUMNS} FROM memory_index i WHERE i.seq IN (${p.list(best)}) AND ${filterSql(p, options, { byKey: true })} AND i."vectorModel" = ${p.add(model)}`,
        p.values,
      )) as IndexRow[];
      rows.sort((a, b) => order.get(a.seq)! - order.get(b.seq)!);
      for (const row of rows.slice(0, poolSize * 2)) candidates.set(row.itemId, row);
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

/**
 * The visibility filter on `memory_index i`. `byKey`: the rows are picked by seq, so on SQLite the filter's
 * columns are marked (`+col`) as not to be searched by index: the planner would otherwise probe the
 * (owner, type) index once per owner, type and seq instead of reading each row by its key.
 */
function filterSql(p: Params, options: MemoryStoreSearchOptions, { byKey = false } = {}): string {
  const col = (name: string) => (byKey && !p.pg ? `+i.${name}` : `i.${name}`);
  const parts: string[] = [];
  if (options.owners !== 'all') parts.push(`${col('owner')} IN (${p.list(options.owners)})`);
  if (options.types?.length) parts.push(`${col('type')} IN (${p.list(options.types)})`);
  if (options.excludeTypes?.length) parts.push(`${col('type')} NOT IN (${p.list(options.excludeTypes)})`);
  return parts.length ? parts.join(' AND ') : '1 = 1';
}

async function visibleCount(source: SearchSource, options: MemoryStoreSearchOptions): Promise<number> {
  const p = new Params(source.pg);
  const [row] = (await source.query(`SELECT COUNT(*) AS n FROM memory_index i WHERE ${filterSql(p, options)}`, p.values)) as Array<{ n: number | string }>;
  return Number(row?.n ?? 0);
}

/**
 * Types left out (`excludeTypes`), and on SQLite no type filter at all, become the list of types the owners
 * have (a few index probes), so every filter is an (owner, type) range of the index and counts of recent
 * items (`termStats`) read only those: on SQLite the index ends in the rowid (seq), so `seq >= ?` is a range
 * of it (100k items of one owner: 0.15 ms instead of 9–18 ms to count the newest 2000).
 * Null: nothing of a wanted type is visible.
 */
async function withVisibleTypes(source: SearchSource, options: MemoryStoreSearchOptions): Promise<MemoryStoreSearchOptions | null> {
  const exclude = new Set(options.excludeTypes ?? []);
  if (options.types?.length) {
    const types = options.types.filter((t) => !exclude.has(t));
    return types.length ? { ...options, types, excludeTypes: undefined } : null;
  }
  if (options.owners === 'all' || (!exclude.size && source.pg)) return options;
  const types = new Set<string>();
  for (const owner of options.owners) {
    for (let last = '', guard = 0; guard < 100; guard++) {
      const p = new Params(source.pg);
      const [row] = (await source.query(`SELECT type FROM memory_index WHERE owner = ${p.add(owner)} AND type > ${p.add(last)} ORDER BY type LIMIT 1`, p.values)) as Array<{ type: string }>;
      if (!row) break;
      last = row.type;
      if (!exclude.has(row.type)) types.add(row.type);
    }
  }
  return types.size ? { ...options, types: [...types].sort(), excludeTypes: undefined } : null;
}

/** A query term's count among the visible items (exact below TERM_CAP, estimated above). */
interface TermStat {
  term: string;
  df: number;
  /** At least TERM_CAP visible items contain it (df is an estimate). */
  common: boolean;
}

/** `term` as a full-text condition on `memory_index i` (PostgreSQL) or `memory_fts` (SQLite). */
function matchSql(p: Params, terms: readonly string[], op: 'AND' | 'OR'): string {
  // Terms are letters and digits only, so joining them is a valid tsquery / FTS5 expression.
  if (p.pg) return `to_tsvector('simple', i."searchText") @@ to_tsquery('simple', ${p.add(terms.join(op === 'AND' ? ' & ' : ' | '))})`;
  return `memory_fts MATCH ${p.add(terms.map((t) => `"${t}"`).join(` ${op} `))}`;
}

/** `FROM` of a full-text search over `memory_index i`. */
function ftsFrom(pg: boolean): string {
  return pg ? 'memory_index i' : 'memory_fts JOIN memory_index i ON i.seq = memory_fts.rowid';
}

/** Newest matches first (on SQLite in the full-text index's own order, so a LIMIT stops the scan early). */
function newestFirst(pg: boolean): string {
  return pg ? 'i.seq DESC' : 'memory_fts.rowid DESC';
}

/**
 * Visible items containing `term`, counted up to `cap` (TERM_CAP), newest first. Past the cap the count is
 * estimated as cap × visible / visible-since-the-oldest-counted (the term's share of the newest items):
 * a word in most rows is not counted to the end. Only visible items take part, so the estimate tells
 * nothing about anyone else's items either.
 */
async function termStats(source: SearchSource, term: string, options: MemoryStoreSearchOptions, total: number, cap: number): Promise<TermStat> {
  const p = new Params(source.pg);
  const match = matchSql(p, [term], 'AND');
  const [row] = (await source.query(
    `SELECT COUNT(*) AS n, MIN(seq) AS since FROM (SELECT i.seq AS seq FROM ${ftsFrom(source.pg)} WHERE ${match} AND ${filterSql(p, options)}${Number.isFinite(cap) ? ` ORDER BY ${newestFirst(source.pg)} LIMIT ${cap}` : ''}) t`,
    p.values,
  )) as Array<{ n: number | string; since: number | string | null }>;
  const n = Number(row?.n ?? 0);
  if (n < cap) return { term, df: n, common: false };
  const q = new Params(source.pg);
  const [recent] = (await source.query(`SELECT COUNT(*) AS n FROM memory_index i WHERE ${filterSql(q, options)} AND i.seq >= ${q.add(Number(row!.since))}`, q.values)) as Array<{ n: number | string }>;
  const visibleSince = Math.max(n, Number(recent?.n ?? n));
  return { term, df: Math.max(n, Math.min(total, Math.round((n * total) / visibleSince))), common: true };
}

/**
 * Keyword candidates, bounded: the best `limit` by rank among the items with a term below TERM_CAP (every
 * one of those is looked at: rare words carry most of the keyword score), plus the newest `limit` items
 * with all the common terms (and, when too few have all, with any of them). Ranking by rank over the
 * matches of a word found in most rows would score the whole table.
 */
async function keywordRows(source: SearchSource, stats: readonly TermStat[], options: MemoryStoreSearchOptions, limit: number): Promise<IndexRow[]> {
  const rare = stats.filter((s) => !s.common && s.df > 0).map((s) => s.term);
  const common = stats.filter((s) => s.common).map((s) => s.term);
  const out: IndexRow[] = [];
  if (rare.length) {
    const p = new Params(source.pg);
    const match = matchSql(p, rare, 'OR');
    const rank = source.pg ? `ts_rank(to_tsvector('simple', i."searchText"), to_tsquery('simple', ${p.add(rare.join(' | '))})) DESC` : 'bm25(memory_fts)';
    out.push(...((await source.query(`SELECT ${INDEX_COLUMNS} FROM ${ftsFrom(source.pg)} WHERE ${match} AND ${filterSql(p, options)} ORDER BY ${rank} LIMIT ${limit}`, p.values)) as IndexRow[]));
  }
  for (const op of ['AND', 'OR'] as const) {
    if (!common.length || (op === 'OR' && common.length < 2)) continue;
    const p = new Params(source.pg);
    const rows = (await source.query(`SELECT ${INDEX_COLUMNS} FROM ${ftsFrom(source.pg)} WHERE ${matchSql(p, common, op)} AND ${filterSql(p, options)} ORDER BY ${newestFirst(source.pg)} LIMIT ${limit}`, p.values)) as IndexRow[];
    out.push(...rows);
    if (rows.length >= limit) break;
  }
  return out;
}
