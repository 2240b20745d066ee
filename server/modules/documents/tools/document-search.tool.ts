import { z } from 'zod';
import { TrustLevel } from '../../../common/trust';
import type { Db } from '../../../persistence/db';
import { Session } from '../../sessions';
import { defineTool, type Tool } from '../../tools';
import type { KnowledgeSearchService } from '../knowledge-search.service';

const schema = z
  .object({
    query: z.string().trim().min(1).max(500).describe('What to look for in the documents.'),
    limit: z.number().int().min(1).max(20).optional().describe('Default 5.'),
  })
  .strict();

export type DocumentSearchArgs = z.output<typeof schema>;

/**
 * `document_search` (MEMBER): searches the passages of the documents the sender may see in this chat —
 * in a direct chat their own and global ones, in a group that group's collection and global ones.
 */
export function createDocumentSearchTool(deps: { search: KnowledgeSearchService; db: Db; minScore: number }): Tool<DocumentSearchArgs> {
  return defineTool({
    name: 'document_search',
    description: 'Searches the documents (PDFs, Word files, notes) the user shared; each result has a citation like "name, p. 3" to quote.',
    schema,
    minTrust: TrustLevel.MEMBER,
    summarizeArgs: (args) => `query of ${args.query.length} characters`,
    async run(tc, args) {
      const session = await deps.db.repo(tc.ctx, Session).findOneBy({ id: tc.sessionId });
      if (!session) return { results: [], note: 'This chat has no session; nothing to search.' };
      const hits = await deps.search.searchInSession(tc.ctx, session, args.query, { limit: args.limit ?? 5, minScore: deps.minScore / 2, documentsOnly: true });
      if (!hits.length) return { results: [], note: 'No matching passages in the documents.' };
      return {
        results: hits.map((h) => ({ citation: h.chunk!.citation, document: h.chunk!.documentName, page: h.chunk!.page, content: h.chunk!.content, score: Math.round(h.score * 1000) / 1000 })),
      };
    },
  });
}
