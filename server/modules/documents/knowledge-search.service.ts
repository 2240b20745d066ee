import { In } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import { access } from '../../common/access';
import { TrustLevel } from '../../common/trust';
import type { Db } from '../../persistence/db';
import {
  DOCUMENT_CHUNK_TYPE,
  GLOBAL_OWNER,
  MAX_SEARCH_LIMIT,
  userOwner,
  visibleOwnersInSession,
  type Memory,
  type MemorySearchService,
  type MemoryStore,
  type MemoryStoreHit,
  type SessionScope,
} from '../memory';
import { Document } from './document.entity';
import { DocumentChunk } from './document-chunk.entity';
import { ownerOfDocument } from './document-ingest.service';
import { chunkIdOfItem, citationOf, DocumentStatus, KnowledgeSource } from './document.types';

/** A passage of a document found by search. */
export interface ChunkHit {
  chunkId: string;
  documentId: string;
  documentName: string;
  page: number | null;
  heading: string | null;
  content: string;
  /** `name, p. 3`. */
  citation: string;
}

/** A search hit: a memory or a document passage, with its scores (0..1). */
export interface KnowledgeHit {
  source: KnowledgeSource;
  memory: Memory | null;
  chunk: ChunkHit | null;
  score: number;
  keywordScore: number;
  vectorScore: number | null;
}

export interface KnowledgeSearchOptions {
  limit: number;
  minScore: number;
  vectorOnlyMinSimilarity?: number;
  /** Memory types left out (recall: reminders). */
  excludeTypes?: readonly string[];
  /** Only document passages (`document_search`). */
  documentsOnly?: boolean;
}

/**
 * One hybrid search (keyword + vector, one ranking) over memories and document passages together, with
 * the visibility rules of memories: a hit is kept only when its memory or its document is visible to the
 * caller, whatever the index says; documents count only once READY.
 */
export class KnowledgeSearchService {
  constructor(
    private readonly db: Db,
    private readonly store: MemoryStore,
    private readonly memories: MemorySearchService,
  ) {}

  /** `searchMemories`: own and global memories and documents; everyone's for ADMIN and above. */
  search(ctx: Ctx, query: string, limit = 10): Promise<KnowledgeHit[]> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'memories');
    const owners = access.seesEveryone(ctx) ? 'all' : ctx.userId ? [userOwner(ctx.userId), GLOBAL_OWNER] : [GLOBAL_OWNER];
    return this.run(ctx, query, owners, { limit, minScore: this.memories.minScore / 2 });
  }

  /** What the sender may see in this session: own + global in a direct chat, that group's + global in a group. */
  searchInSession(ctx: Ctx, session: SessionScope, query: string, options: KnowledgeSearchOptions): Promise<KnowledgeHit[]> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'memories');
    if (!ctx.userId) return Promise.resolve([]);
    return this.run(ctx, query, visibleOwnersInSession(ctx.userId, session), options);
  }

  private async run(ctx: Ctx, query: string, owners: string[] | 'all', options: KnowledgeSearchOptions): Promise<KnowledgeHit[]> {
    const limit = Math.max(1, Math.min(MAX_SEARCH_LIMIT, Math.floor(options.limit)));
    if (!query.trim()) return [];
    const hits = await this.store.search(ctx, query, {
      owners,
      limit,
      minScore: options.minScore,
      vectorOnlyMinSimilarity: options.vectorOnlyMinSimilarity,
      ...(options.documentsOnly ? { types: [DOCUMENT_CHUNK_TYPE] } : { excludeTypes: options.excludeTypes }),
    });
    if (!hits.length) return [];
    const memories = new Map((await this.memories.resolveHits(ctx, hits, owners, options.excludeTypes)).map((r) => [r.memory.id, r.memory]));
    const chunks = await this.resolveChunks(ctx, hits, owners);
    const out: KnowledgeHit[] = [];
    for (const hit of hits) {
      const scores = { score: hit.score, keywordScore: hit.keywordScore, vectorScore: hit.vectorScore };
      const chunk = chunks.get(hit.id);
      if (chunk) out.push({ source: KnowledgeSource.DOCUMENT, memory: null, chunk, ...scores });
      const memory = memories.get(hit.id);
      if (memory) out.push({ source: KnowledgeSource.MEMORY, memory, chunk: null, ...scores });
    }
    return out;
  }

  private async resolveChunks(ctx: Ctx, hits: readonly MemoryStoreHit[], owners: readonly string[] | 'all'): Promise<Map<string, ChunkHit>> {
    const wanted = hits.filter((h) => h.type === DOCUMENT_CHUNK_TYPE).map((h) => [h.id, chunkIdOfItem(h.id)] as const).filter((x): x is readonly [string, string] => !!x[1]);
    const out = new Map<string, ChunkHit>();
    if (!wanted.length) return out;
    const rows = await this.db.repo(ctx, DocumentChunk).findBy({ id: In(wanted.map(([, id]) => id)) });
    const docs = new Map((await this.db.repo(ctx, Document).findBy({ id: In([...new Set(rows.map((r) => r.documentId))]) })).map((d) => [d.id, d]));
    const allowed = owners === 'all' ? null : new Set(owners);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const [itemId, chunkId] of wanted) {
      const row = byId.get(chunkId);
      const doc = row ? docs.get(row.documentId) : undefined;
      if (!row || !doc || doc.status !== DocumentStatus.READY) continue;
      if (allowed && !allowed.has(ownerOfDocument(doc))) continue;
      out.set(itemId, { chunkId: row.id, documentId: doc.id, documentName: doc.name, page: row.page, heading: row.heading, content: row.content, citation: citationOf(doc.name, row.page) });
    }
    return out;
  }
}
