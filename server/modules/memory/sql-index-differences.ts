import { DOCUMENT_ITEM_PREFIX } from './memory-store';
import { nextMacrotask, RECONCILE_PAGE } from './reconcile-paging';
import { Params } from './sql-memory-search';

// === The memories table against the SQL memory index, compared by the database (MemoryIndexer.reconcile)
// Reading both tables into JS (ids and dates of every row, TypeORM entities on one side) cost about a second
// of the event loop at 100k memories, right after every start, where a user's first search waited behind
// it page by page. Here the database joins the two a page at a time and returns only the differences
// (usually none): 100k memories, ≈ 0.25–0.5 s of SQLite in pages of a few ms, on a search thread when the
// store has one (memory-search-worker.ts), else on the event loop.

/** What `reconcile` has to repair. */
export interface IndexDifferences {
  /** Memories without an index entry, or whose entry carries another update time. */
  stale: string[];
  /** Entries whose memory is gone (document chunks are never listed: the documents module keeps them). */
  gone: string[];
}

type Query = (sql: string, params: readonly unknown[]) => Promise<unknown[]>;

export interface IndexDifferencesOptions {
  signal?: AbortSignal;
  /** Waited for between two statements. @default the next macrotask (requests waiting on the event loop go first) */
  between?: () => Promise<void>;
  /** Rows per statement. @default RECONCILE_PAGE */
  page?: number;
}

/**
 * Compares `memories` with `memory_index` (both in the database `query` reads), a page of rows per
 * statement. Entries without a memory are looked for only when the counts say there are some (every entry
 * not a document chunk has its memory, in the usual case). Each page is its own snapshot: a memory written
 * while this runs may be listed or not, and an entry orphaned by a concurrent change may be left for the
 * next reconcile. Stops early (partial lists) when `signal` aborts.
 */
export async function indexDifferences(query: Query, pg: boolean, options: IndexDifferencesOptions = {}): Promise<IndexDifferences> {
  const { signal, between = nextMacrotask, page = RECONCILE_PAGE } = options;
  const prefix = DOCUMENT_ITEM_PREFIX;
  // SQLite pages by rowid (the table's order on disk; ids of memories written behind the service's back
  // may be random); PostgreSQL by id.
  const key = pg ? 'm.id' : 'm.rowid';
  // A date differs when its text does and, on SQLite, when it is another instant (a row written with
  // another date format stays current).
  const differs = pg
    ? `i."itemUpdatedAt" IS DISTINCT FROM m."updatedAt"`
    : `(i."itemUpdatedAt" IS NOT m."updatedAt" AND julianday(i."itemUpdatedAt") IS NOT julianday(m."updatedAt"))`;
  const stale: string[] = [];
  let memories = 0;
  let missing = 0;
  for await (const [from, to] of pages(query, pg, 'memories m', key, page, between, signal)) {
    // The page's differences, and (id null) how many memories it holds.
    const p = new Params(pg);
    const rows = (await query(
      `SELECT m.id AS id, i.seq AS seq FROM memories m LEFT JOIN memory_index i ON i."itemId" = m.id ` +
        `WHERE ${range(p, key, from, to)} AND (i.seq IS NULL OR ${differs}) ` +
        `UNION ALL SELECT NULL, COUNT(*) FROM memories m WHERE ${range(p, key, from, to)}`,
      p.values,
    )) as Array<{ id: string | null; seq: number | string | null }>;
    for (const r of rows) {
      if (r.id === null) memories += Number(r.seq);
      else {
        stale.push(r.id);
        if (r.seq === null) missing++;
      }
    }
  }
  const gone: string[] = [];
  if (signal?.aborted) return { stale, gone };
  // With each memory on at most one entry and each entry on at most one memory, entries (document chunks
  // aside) - memories = gone - missing. On SQLite the entries are counted on the itemId index, which the
  // pages above have just read.
  const c = new Params(pg);
  const docs = pg
    ? `substr("itemId", 1, ${prefix.length}) = ${c.add(prefix)}`
    : `"itemId" >= ${c.add(prefix)} AND "itemId" < ${c.add(prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1))}`;
  const [counts] = (await query(
    `SELECT COUNT(*) AS entries, SUM(CASE WHEN ${docs} THEN 1 ELSE 0 END) AS docs FROM memory_index${pg ? '' : ` WHERE "itemId" >= ''`}`,
    c.values,
  )) as Array<{ entries: number | string; docs: number | string | null }>;
  if (Number(counts!.entries) - Number(counts!.docs ?? 0) - memories + missing <= 0) return { stale, gone };
  for await (const [from, to] of pages(query, pg, 'memory_index i', 'i.seq', page, between, signal)) {
    const p = new Params(pg);
    const rows = (await query(
      `SELECT i."itemId" AS id FROM memory_index i WHERE ${range(p, 'i.seq', from, to)} ` +
        `AND substr(i."itemId", 1, ${prefix.length}) <> ${p.add(prefix)} AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = i."itemId")`,
      p.values,
    )) as Array<{ id: string }>;
    for (const r of rows) gone.push(r.id);
  }
  return { stale, gone };
}

type Bound = string | number | null;

/** `from < key <= to`, either side open when null. */
function range(p: Params, key: string, from: Bound, to: Bound): string {
  const parts = [from === null ? null : `${key} > ${p.add(from)}`, to === null ? null : `${key} <= ${p.add(to)}`].filter((x) => x !== null);
  return parts.length ? parts.join(' AND ') : '1 = 1';
}

/** The key ranges of consecutive pages of `page` rows of `table`, `(from, to]` (null: open), `between` before each next one. */
async function* pages(query: Query, pg: boolean, table: string, key: string, page: number, between: () => Promise<void>, signal?: AbortSignal): AsyncGenerator<[Bound, Bound]> {
  for (let from: Bound = null; !signal?.aborted; ) {
    const p = new Params(pg);
    const [row] = (await query(
      `SELECT ${key} AS k FROM ${table} ${from === null ? '' : `WHERE ${key} > ${p.add(from)} `}ORDER BY ${key} LIMIT 1 OFFSET ${page - 1}`,
      p.values,
    )) as Array<{ k: string | number }>;
    const to: Bound = row ? row.k : null;
    yield [from, to];
    if (to === null) return;
    from = to;
    await between();
  }
}
