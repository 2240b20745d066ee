import type { Ctx } from '../../common/ctx';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { MemoryRecall, RecalledMemory } from '../agent';
import { MemoryType, RECALL_VECTOR_ONLY_MIN_SIMILARITY, type MemorySearchService } from '../memory';
import type { Session } from '../sessions';
import type { KnowledgeSearchService } from './knowledge-search.service';
import { KnowledgeSource } from './document.types';

/**
 * Recall before each turn with documents: memories and document passages the sender may see in this
 * session, ranked together by one hybrid search, at most `memory.max_results` above `memory.min_score`;
 * passages carry their citation (`name, p. 3`) so the answer can name its source. The prompt builder fits
 * them into the turn's budget with the memories (lowest ranked dropped first). GUESTs recall nothing; a
 * failing search costs the turn its recall, never the turn.
 */
export class KnowledgeRecall implements MemoryRecall {
  constructor(
    private readonly search: KnowledgeSearchService,
    private readonly memories: MemorySearchService,
  ) {}

  async recall(ctx: Ctx, session: Session, query: string): Promise<RecalledMemory[]> {
    if (ctx.actor.kind !== 'user' || !trustAtLeast(ctx.trust, TrustLevel.MEMBER)) return [];
    if (!query.trim() || this.memories.maxResults <= 0) return [];
    try {
      const hits = await this.search.searchInSession(ctx, session, query, {
        limit: this.memories.maxResults,
        minScore: this.memories.minScore,
        excludeTypes: [MemoryType.REMINDER],
        vectorOnlyMinSimilarity: RECALL_VECTOR_ONLY_MIN_SIMILARITY,
      });
      return hits.map((h) =>
        h.source === KnowledgeSource.DOCUMENT ? { content: h.chunk!.content, type: 'document', source: h.chunk!.citation } : { content: h.memory!.content, type: h.memory!.type },
      );
    } catch (err) {
      ctx.logger.warn({ err, sessionId: session.id }, 'recall failed — the turn goes on without memories and documents');
      return [];
    }
  }
}
