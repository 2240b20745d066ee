import type { Ctx } from '../../common/ctx';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { MemoryRecall, RecalledMemory } from '../agent';
import type { Session } from '../sessions';
import { RECALL_VECTOR_ONLY_MIN_SIMILARITY, type MemorySearchService } from './memory-search.service';
import { MemoryType } from './memory.types';

/**
 * Recall before each turn (DESIGN §5): up to `memory.max_results` memories above `memory.min_score` that
 * the sender may see in this session (own + global in a direct chat; that group's + global in a group),
 * never `reminder` memories, and a memory sharing no word with the message only when its meaning is very
 * close (`RECALL_VECTOR_ONLY_MIN_SIMILARITY`). GUESTs and unknown senders recall nothing. A failing search costs the turn
 * its memories, never the turn.
 */
export class MemoryRecallService implements MemoryRecall {
  constructor(private readonly search: MemorySearchService) {}

  async recall(ctx: Ctx, session: Session, query: string): Promise<RecalledMemory[]> {
    if (ctx.actor.kind !== 'user' || !trustAtLeast(ctx.trust, TrustLevel.MEMBER)) return [];
    if (!query.trim() || this.search.maxResults <= 0) return [];
    try {
      const results = await this.search.searchInSession(ctx, session, query, {
        limit: this.search.maxResults,
        minScore: this.search.minScore,
        excludeTypes: [MemoryType.REMINDER],
        vectorOnlyMinSimilarity: RECALL_VECTOR_ONLY_MIN_SIMILARITY,
      });
      return results.map((r) => ({ content: r.memory.content, type: r.memory.type }));
    } catch (err) {
      ctx.logger.warn({ err, sessionId: session.id }, 'memory recall failed — the turn goes on without memories');
      return [];
    }
  }
}
