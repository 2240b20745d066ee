import { z } from 'zod';
import { TrustLevel } from '../../../common/trust';
import type { Db } from '../../../persistence/db';
import { Session } from '../../sessions';
import { defineTool, type Tool } from '../../tools';
import type { MemorySearchService } from '../memory-search.service';

const schema = z
  .object({
    query: z.string().trim().min(1).max(500).describe('What to look for.'),
    limit: z.number().int().min(1).max(20).optional().describe('Default 5.'),
  })
  .strict();

export type MemorySearchArgs = z.output<typeof schema>;

/**
 * `memory_search` (MEMBER): searches the memories the sender may see in this chat — in a direct chat their
 * own and global ones, in a group that group's and global ones (never anyone's private memories there).
 */
export function createMemorySearchTool(deps: { search: MemorySearchService; db: Db }): Tool<MemorySearchArgs> {
  return defineTool({
    name: 'memory_search',
    description: 'Searches long-term memory (facts, lessons, summaries, reminders) from earlier conversations.',
    schema,
    minTrust: TrustLevel.MEMBER,
    summarizeArgs: (args) => `query of ${args.query.length} characters`,
    async run(tc, args) {
      const session = await deps.db.repo(tc.ctx, Session).findOneBy({ id: tc.sessionId });
      if (!session) return { results: [], note: 'This chat has no session; nothing to search.' };
      const results = await deps.search.searchInSession(tc.ctx, session, args.query, {
        limit: args.limit ?? 5,
        minScore: deps.search.minScore / 2,
      });
      if (!results.length) return { results: [], note: 'No matching memories.' };
      return {
        results: results.map((r) => ({
          id: r.memory.id,
          type: r.memory.type,
          content: r.memory.content,
          score: Math.round(r.score * 1000) / 1000,
          updatedAt: r.memory.updatedAt.toISOString(),
        })),
      };
    },
  });
}
