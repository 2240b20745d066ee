import type { Ctx } from '../../common/ctx';

// === Port: the memory search index (STYLE §7)

/** Visibility key of everything scoped to everyone. */
export const GLOBAL_OWNER = 'global';

/**
 * Item type of document chunks, which share the index with memories (modules/documents): their ids start
 * with `DOCUMENT_ITEM_PREFIX`, they are never resolved as memories and reconciliation leaves them alone.
 */
export const DOCUMENT_CHUNK_TYPE = 'document';
export const DOCUMENT_ITEM_PREFIX = 'doc:';

/** Visibility key of a user's private memories. */
export function userOwner(userId: string): string {
  return `user:${userId}`;
}

/** Visibility key of a group chat's memories. */
export function groupOwner(groupId: string): string {
  return `group:${groupId}`;
}

/** One searchable item: a memory (or a chunk of a workspace file, which is stored as a memory). */
export interface MemoryStoreItem {
  /** Memory id; upserting the same id replaces the item. */
  id: string;
  /** Who may see it: `user:<id>`, `group:<id>` or `global` (see `userOwner`, `groupOwner`). */
  owner: string;
  /** Memory type (`summary`, `fact`, `lesson`, `reminder`). */
  type: string;
  content: string;
  /** 0..1; 0.5 is neutral. */
  importance: number;
  /** Last change; newer items rank a little higher (recency decay). */
  updatedAt: Date;
}

/** What a search may see and how much it returns. */
export interface MemoryStoreSearchOptions {
  /**
   * Visibility keys the caller may see. Items of any other owner are never returned, whatever the query.
   * An empty list finds nothing; `'all'` (ADMIN listings only) searches every owner.
   */
  owners: readonly string[] | 'all';
  /** Most hits returned. */
  limit: number;
  /** Only these types. @default every type */
  types?: readonly string[];
  /** Never these types (recall leaves out reminders). @default none */
  excludeTypes?: readonly string[];
  /** Hits scoring below this (0..1) are dropped. @default 0 */
  minScore?: number;
  /**
   * Hits that share no word with the query need at least this cosine similarity (0..1). Recall sets it
   * high: a memory injected into every prompt should be clearly related, and many embedding models give
   * unrelated texts a cosine of 0.3–0.5. @default 0 (any)
   */
  vectorOnlyMinSimilarity?: number;
}

/** A search result with its scores (all 0..1). */
export interface MemoryStoreHit {
  id: string;
  owner: string;
  type: string;
  content: string;
  importance: number;
  updatedAt: Date;
  /** Final relevance: hybrid of keyword and vector, weighted by importance and recency. */
  score: number;
  /** Share of the query's (IDF-weighted) terms the item contains. */
  keywordScore: number;
  /** Cosine similarity to the query; null when no vector took part (keyword-only). */
  vectorScore: number | null;
}

/**
 * The memory search index: keyword plus vector search over items the caller may see, re-ranked for
 * diversity (MMR) and recency. The memories table stays the source of truth; an index can be rebuilt
 * from it at any time (`MemoryIndexer.reconcile`). Implementations: `SqlMemoryStore` (FTS5 + sqlite-vec
 * on SQLite, keyword-only on PostgreSQL) and `LanceDbMemoryStore`. Every implementation passes
 * tests/support/conformance/memory-store.conformance.ts.
 *
 * @example
 * await store.upsert(ctx, [{ id, owner: userOwner(userId), type: 'fact', content: 'Locker code 4417', importance: 0.5, updatedAt: new Date() }]);
 * const hits = await store.search(ctx, 'locker code', { owners: [userOwner(userId), GLOBAL_OWNER], limit: 6 });
 */
export interface MemoryStore {
  /** `sqlite-vec`, `sql-scan` (PostgreSQL) or `lancedb`, for logs and /status. */
  readonly name: string;
  /** Whether a search now would embed its query (vectors stored, an embedder set); known after `init`. @default false */
  readonly embedsQueries?: boolean;
  /** Opens files and tables; safe to call twice. */
  init?(ctx: Ctx): Promise<void>;
  /**
   * `init`, then whatever makes the first search as fast as the next ones (a search thread started, codes
   * loaded, a practice search); resolves when done. @default absent: `init` is all there is
   */
  warm?(ctx: Ctx): Promise<void>;
  /** Adds or replaces items (embedding them when an embedder works; keyword-indexed either way). */
  upsert(ctx: Ctx, items: readonly MemoryStoreItem[]): Promise<void>;
  /** Removes items by id; unknown ids are ignored. */
  delete(ctx: Ctx, ids: readonly string[]): Promise<void>;
  /** Hits for `query`, best first, only among `options.owners`. Never throws for odd query text. */
  search(ctx: Ctx, query: string, options: MemoryStoreSearchOptions): Promise<MemoryStoreHit[]>;
  /** Every indexed id with the `updatedAt` it was indexed with (reconciliation with the memories table). */
  entries(ctx: Ctx): Promise<Map<string, number>>;
  /**
   * Memories whose entry is missing or out of date (`stale`) and entries whose memory is gone (`gone`,
   * document chunks left out), compared inside the database by a store kept in the app's own database, so
   * that only the differences reach JS. @default absent: reconciliation compares `entries` with the table
   */
  differences?(ctx: Ctx, signal?: AbortSignal): Promise<{ stale: string[]; gone: string[] }>;
  /**
   * Embeds items that have no vector of the current embedding model yet (indexed while the embedder was
   * down, or before a model change). Returns how many got one. @default no-op
   */
  syncVectors?(ctx: Ctx, signal?: AbortSignal): Promise<number>;
  dispose?(): Promise<void>;
}
