import { In } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import { TrustLevel } from '../../common/trust';
import type { Db } from '../../persistence/db';
import type { Session } from '../sessions';
import { ChatKind } from '../sessions';
import { access } from '../users';
import { Memory } from './memory.entity';
import { ownerOfMemory } from './memory-indexer';
import { DOCUMENT_CHUNK_TYPE, GLOBAL_OWNER, groupOwner, userOwner, type MemoryStore, type MemoryStoreHit } from './memory-store';

/** A memory found by search, with its scores (0..1). */
export interface MemorySearchResult {
  memory: Memory;
  score: number;
  keywordScore: number;
  vectorScore: number | null;
}

export interface MemorySearchOptions {
  /** `memory.max_results`: memories recalled before a turn. @default 6 */
  maxResults?: number;
  /** `memory.min_score`: lowest score of a recalled memory; explicit searches use half of it. @default 0.2 */
  minScore?: number;
}

/** Most hits one search returns. */
export const MAX_SEARCH_LIMIT = 50;

/** Cosine a recalled memory that shares no word with the message needs (see `vectorOnlyMinSimilarity`). */
export const RECALL_VECTOR_ONLY_MIN_SIMILARITY = 0.8;

/** Limits of one search in a session (recall, memory_search). */
export interface SearchRunOptions {
  limit: number;
  minScore: number;
  excludeTypes?: readonly string[];
  vectorOnlyMinSimilarity?: number;
}

/** What a session needs to say which memories its sender may see. */
export type SessionScope = Pick<Session, 'chatKind' | 'key'>;

/**
 * Group key of a group session's memories: the session key (`agent:main:<channel>:group:<chatId>`), which
 * stays the same when the session rotates; null for other sessions.
 */
export function memoryGroupIdOf(session: SessionScope): string | null {
  return session.chatKind === ChatKind.GROUP && session.key ? session.key : null;
}

/**
 * Visibility keys for a sender in a session (DESIGN §3, §5): in a direct chat their own memories and global
 * ones; in a group chat that group's memories and global ones — never anyone's private memories.
 */
export function visibleOwnersInSession(userId: string, session: SessionScope): string[] {
  const group = memoryGroupIdOf(session);
  if (session.chatKind === ChatKind.GROUP) return group ? [groupOwner(group), GLOBAL_OWNER] : [GLOBAL_OWNER];
  return [userOwner(userId), GLOBAL_OWNER];
}

/**
 * Searches memories with the visibility rules applied, and resolves hits to memory rows (the table is the
 * truth: a hit whose memory is gone or not visible is dropped, whatever the index says).
 */
export class MemorySearchService {
  readonly maxResults: number;
  readonly minScore: number;

  constructor(
    private readonly db: Db,
    readonly store: MemoryStore,
    options: MemorySearchOptions = {},
  ) {
    this.maxResults = options.maxResults ?? 6;
    this.minScore = options.minScore ?? 0.2;
  }

  /** `searchMemories`: a MEMBER searches own and global memories; ADMIN and above search everyone's. */
  async search(ctx: Ctx, query: string, limit = 10): Promise<MemorySearchResult[]> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'memories');
    const owners = access.seesEveryone(ctx) ? 'all' : ctx.userId ? [userOwner(ctx.userId), GLOBAL_OWNER] : [GLOBAL_OWNER];
    return this.run(ctx, query, owners, { limit, minScore: this.minScore / 2 });
  }

  /**
   * What the sender may see in this session (recall, `memory_search`): see `visibleOwnersInSession`.
   * Requires a MEMBER or above; others see nothing.
   */
  async searchInSession(
    ctx: Ctx,
    session: SessionScope,
    query: string,
    options: SearchRunOptions,
  ): Promise<MemorySearchResult[]> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'memories');
    if (!ctx.userId) return [];
    return this.run(ctx, query, visibleOwnersInSession(ctx.userId, session), options);
  }

  private async run(ctx: Ctx, query: string, owners: string[] | 'all', options: SearchRunOptions): Promise<MemorySearchResult[]> {
    const limit = Math.max(1, Math.min(MAX_SEARCH_LIMIT, Math.floor(options.limit)));
    if (!query.trim()) return [];
    // Document chunks share the index; memory searches leave them out.
    const excludeTypes = [...(options.excludeTypes ?? []), DOCUMENT_CHUNK_TYPE];
    const hits = await this.store.search(ctx, query, { ...options, excludeTypes, owners, limit });
    return this.resolveHits(ctx, hits, owners, options.excludeTypes);
  }

  /**
   * Memory rows of index hits, in hit order: hits that are not memories, whose memory is gone or not among
   * `owners`, or of an excluded type are dropped (the table is the truth, whatever the index says).
   */
  async resolveHits(ctx: Ctx, hits: readonly MemoryStoreHit[], owners: readonly string[] | 'all', excludeTypes?: readonly string[]): Promise<MemorySearchResult[]> {
    const ids = hits.filter((h) => h.type !== DOCUMENT_CHUNK_TYPE).map((h) => h.id);
    if (!ids.length) return [];
    const rows = await this.db.repo(ctx, Memory).findBy({ id: In(ids) });
    const byId = new Map(rows.map((m) => [m.id, m]));
    const allowed = owners === 'all' ? null : new Set(owners);
    const out: MemorySearchResult[] = [];
    for (const hit of hits) {
      const memory = byId.get(hit.id);
      if (!memory) continue;
      const owner = ownerOfMemory(memory);
      if (!owner || (allowed && !allowed.has(owner))) continue;
      if (excludeTypes?.includes(memory.type)) continue;
      out.push({ memory, score: hit.score, keywordScore: hit.keywordScore, vectorScore: hit.vectorScore });
    }
    return out;
  }
}
