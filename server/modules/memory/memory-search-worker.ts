import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import { loadSqliteDriver } from '../../persistence/sqlite-driver';
import * as sqliteVec from 'sqlite-vec';
import { DOCUMENT_CHUNK_TYPE, GLOBAL_OWNER, type MemoryStoreHit } from './memory-store';
import type { ResolvedRankingOptions } from './hybrid-ranking';
import { searchIndex, type SearchRequest, type SearchSource } from './sql-memory-search';
import { indexDifferences, type IndexDifferences } from './sql-index-differences';
import { readCodes, readPracticeQuery, readVectorOwners, readVectors, type VectorWrite } from './sqlite-vector-tables';
import { VectorCodeIndex } from './vector-code-index';

// === A memory search thread (started by MemorySearchPool)
// Opens its own read-only connection to the app's SQLite file (WAL: readers never wait for the writer) and
// runs SqlMemoryStore's search there, so the keyword and vector scans never block the event loop that
// serves requests. It keeps its own binary codes of the vectors: loaded per owner on first use, updated by
// the writes the app thread commits (`apply`), dropped when the app thread says they are stale
// (`generation`: another process wrote, or the table was rebuilt). Messages are handled one at a time, in
// the order they were sent, and each search reads one snapshot (a read transaction).

/** What the thread is started with. */
export interface SearchWorkerInit {
  /** Absolute path of the SQLite file. */
  file: string;
  busyTimeoutMs: number;
}

/** App thread → search thread. */
export type SearchWorkerRequest =
  | {
      kind: 'search';
      id: number;
      request: SearchRequest;
      /** Dimension of the vector table (null: none). */
      dims: number | null;
      /** The app's `SqliteVectorTables.generation`: a new value drops the loaded codes. */
      generation: number;
    }
  | { kind: 'apply'; set: VectorWrite[]; removed: number[] }
  /**
   * Loads every owner's codes ahead of the searches (sent at start-up), one owner at a time between the
   * messages that come in: a search never waits for the whole warm-up. Unless a search came first, the
   * first owner loaded is also searched once for practice (see `practise`). Answered with `warmed` once the
   * first owner is loaded and practised (or there was nothing to load, or loading failed).
   */
  | { kind: 'warm'; dims: number; generation: number; ranking: ResolvedRankingOptions }
  /**
   * Compares the memories table with the index (MemoryIndexer.reconcile) a page at a time, each page
   * between the messages that come in (a search waits for one page at most), off the event loop.
   */
  | { kind: 'differences'; id: number };

/** A hit as it crosses threads: dates as epoch ms (a cloned Date belongs to the thread's realm, not the caller's). */
export type SearchWorkerHit = Omit<MemoryStoreHit, 'updatedAt'> & { updatedAt: number };

/** Search thread → app thread: the answer to search `id`, or the end of the warm-up's first step. */
export type SearchWorkerReply =
  | { id: number; hits: SearchWorkerHit[] }
  | { id: number; differences: IndexDifferences }
  | { id: number; error: string }
  | { warmed: true };

/** Prepared statements kept (the SQL text varies with the length of IN lists). */
const STATEMENTS = 200;
/**
 * Nice value of a search thread (Linux) once warm: below the event loop's 0, above background work. The
 * warm-up runs at the process's own priority: start-up (and /readyz) waits for it, and a niced thread on a
 * busy machine took seconds for what takes 0.1 s.
 */
const SEARCH_NICE = 5;
/** Memories per statement of an index comparison: a few ms each, which a search that comes in waits for at most. */
const DIFFERENCES_PAGE = 500;
/** Most page cache of a search connection, KiB. */
const CACHE_KIB = 65536;
/** Count results kept. */
const COUNTS = 2000;
/**
 * Counts of at least this many items outlive writes (for up to STICKY_MS): a turn's few writes move them by
 * well under 1%, which changes no ranking, while counting them again costs milliseconds per term after
 * every turn. Smaller counts (a word the user just wrote down) are counted again after every write.
 */
const STICKY_MIN = 1000;
const STICKY_MS = 60_000;

function run(init: SearchWorkerInit, port: NonNullable<typeof parentPort>): void {
  // On Linux a nice value belongs to one thread (pid 0 = the calling thread): when the CPU is short, the
  // event loop serving turns and requests goes first and searches wait. Elsewhere it would apply to the
  // whole process, so it is left alone. Set once the warm-up's first step is done (or none comes).
  let niced = false;
  const nice = () => {
    if (niced || process.platform !== 'linux') return;
    niced = true;
    try {
      os.setPriority(SEARCH_NICE);
    } catch {
      /* not permitted: searches share the CPU evenly */
    }
  };
  // The first owner loaded and practised (or nothing to warm): the app's start-up goes on.
  let warmedSent = false;
  const warmed = () => {
    nice();
    if (warmedSent) return;
    warmedSent = true;
    port.postMessage({ warmed: true } satisfies SearchWorkerReply);
  };
  const Database = loadSqliteDriver();
  const db = new Database(init.file, { readonly: true, fileMustExist: true });
  db.pragma(`busy_timeout = ${init.busyTimeoutMs}`);
  // A search reads a few hundred rows spread over the file (float vectors, index and full-text pages): a
  // page cache larger than SQLite's default 2 MB keeps more of them between searches (taken as they are
  // read, up to CACHE_KIB). No mmap_size: with the file mapped, each search after another connection's
  // commit (as after every turn) cost two to three times the CPU (50k passages: 13 → 33 ms).
  db.pragma(`cache_size = -${CACHE_KIB}`);
  try {
    sqliteVec.load(db); // as on the app's connection (data-source.ts); search itself needs only FTS5
  } catch {
    /* the app thread reports a missing extension */
  }
  const statements = new Map<string, BetterSqlite3.Statement>();
  const all = (sql: string, params: readonly unknown[] = []): unknown[] => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      if (statements.size >= STATEMENTS) statements.delete(statements.keys().next().value!);
      statements.set(sql, statement);
    }
    return statement.all(...params);
  };
  // Counts (visible items, items per query term: the keyword score's IDF) are kept until another connection
  // commits (data_version, read before each search's snapshot), large ones a while longer (STICKY_MIN):
  // recall asks the same ones turn after turn.
  const counts = new Map<string, { rows: unknown[]; at: number }>();
  let countsVersion: number | null = null;
  const query = async (sql: string, params: readonly unknown[] = []) => {
    if (!sql.startsWith('SELECT COUNT(*)')) return all(sql, params);
    const key = `${sql}\0${JSON.stringify(params)}`;
    let entry = counts.get(key);
    if (!entry) {
      entry = { rows: all(sql, params), at: Date.now() };
      if (counts.size >= COUNTS) counts.delete(counts.keys().next().value!);
      counts.set(key, entry);
    }
    return entry.rows;
  };
  const checkVersion = () => {
    const version = Number(db.pragma('data_version', { simple: true }));
    if (version !== countsVersion) {
      const now = Date.now();
      for (const [key, entry] of counts) {
        const n = Number((entry.rows[0] as { n?: unknown } | undefined)?.n ?? 0);
        if (n < STICKY_MIN || now - entry.at > STICKY_MS) counts.delete(key);
      }
    }
    countsVersion = version;
  };
  let codes: VectorCodeIndex | null = null;
  let generation: number | null = null;
  const source: SearchSource = {
    pg: false,
    query,
    nearest: async (vector, owners, k) => (codes ? codes.nearest(vector, owners === 'all' ? await readVectorOwners(query) : owners, k) : []),
    vectors: (seqs) => readVectors(query, seqs),
  };

  const useCodes = (dims: number | null, gen: number) => {
    if (gen !== generation || (codes?.dims ?? null) !== dims) {
      codes = dims === null ? null : new VectorCodeIndex(dims, (owner) => readCodes(query, owner));
      generation = gen;
    }
  };

  // A search on a fresh thread runs its code unoptimized and reads every page through SQLite for the first
  // time: 100k × 768, 60–130 ms against 20–40 once warm. One search for practice at start-up (an owner's
  // entry as the query, the hits thrown away) takes that cost before a caller's search comes. It asks as a
  // memory search of that user (or group) does, their items and everyone's without document passages, so
  // the count of what they see (tens of ms at 100k) is kept for their first search.
  let practised = false;
  const practise = async (owner: string, ranking: ResolvedRankingOptions): Promise<void> => {
    if (practised) return;
    practised = true;
    const sample = await readPracticeQuery(query, owner);
    if (!sample) return;
    const owners = owner === GLOBAL_OWNER ? [owner] : [owner, GLOBAL_OWNER];
    const options = { owners, limit: 10, excludeTypes: [DOCUMENT_CHUNK_TYPE] };
    await searchIndex(source, { query: sample.text, options, queryVector: sample.vector, model: sample.model, ranking });
  };

  let queue = Promise.resolve();
  // The warm-up loads one owner per step, each step queued behind the messages that came in meanwhile: a
  // search waits for at most one owner's codes besides its own (loaded on demand by the search itself),
  // never for every owner's.
  let warming: string[] = [];
  let warmRanking: ResolvedRankingOptions | null = null;
  const warmStep = async (): Promise<void> => {
    const owner = warming.shift();
    if (owner === undefined || !codes) return warmed();
    try {
      checkVersion();
      db.exec('BEGIN');
      try {
        await codes.load([owner]);
        // A failed practice only leaves the first search cold (that search reports what fails).
        if (warmRanking) await practise(owner, warmRanking).catch(() => undefined);
      } finally {
        db.exec('COMMIT');
      }
    } catch {
      warming = []; // the searches load what they need (and report what fails)
      return warmed();
    }
    warmed();
    if (warming.length) nextWarmStep();
  };
  // Two hops through the event loop's check phase take it through a poll phase, where messages that came in
  // during the step are received (and queued) before the next step is.
  const nextWarmStep = () => setImmediate(() => setImmediate(() => (queue = queue.then(warmStep))));
  // Two hops, as between warm-up steps: the messages that came in during a page are handled before the next.
  const betweenPages = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
  const differences = async (id: number): Promise<void> => {
    try {
      const found = await indexDifferences(async (sql, params) => all(sql, params), false, { between: betweenPages, page: DIFFERENCES_PAGE });
      port.postMessage({ id, differences: found } satisfies SearchWorkerReply);
    } catch (err) {
      port.postMessage({ id, error: (err as Error).message || String(err) } satisfies SearchWorkerReply);
    }
  };
  const handle = async (message: SearchWorkerRequest): Promise<void> => {
    if (message.kind === 'differences') {
      // Beside the queue, not in it: each page is one statement, run between the messages.
      void differences(message.id);
      return;
    }
    if (message.kind === 'apply') {
      codes?.apply({ set: message.set, removed: message.removed });
      return;
    }
    if (message.kind === 'warm') {
      try {
        useCodes(message.dims, message.generation);
        warmRanking = message.ranking;
        warming = await readVectorOwners(query);
        if (warming.length) nextWarmStep();
        else warmed();
      } catch {
        warmed(); // the first search loads what it needs (and reports what fails)
      }
      return;
    }
    try {
      practised = true;
      if (!warming.length) nice(); // no warm-up under way: searches run niced from the first
      useCodes(message.dims, message.generation);
      checkVersion();
      db.exec('BEGIN');
      let hits: SearchWorkerHit[];
      try {
        hits = (await searchIndex(source, message.request)).map((h) => ({ ...h, updatedAt: h.updatedAt.getTime() }));
      } finally {
        db.exec('COMMIT');
      }
      port.postMessage({ id: message.id, hits } satisfies SearchWorkerReply);
    } catch (err) {
      port.postMessage({ id: message.id, error: (err as Error).message || String(err) } satisfies SearchWorkerReply);
    }
  };
  port.on('message', (message: SearchWorkerRequest) => {
    queue = queue.then(() => handle(message));
  });
}

if (parentPort) run(workerData as SearchWorkerInit, parentPort);
