import { z } from 'zod';
import { TrustLevel } from '../../../common/trust';
import { defineTool, ToolRefusedError, type Tool } from '../../tools';
import type { MemoryService } from '../memory.service';
import { MemoryScope, MemoryType } from '../memory.types';

const schema = z
  .object({
    content: z.string().trim().min(1).max(2000).describe('One self-contained sentence or two.'),
    type: z.enum(['fact', 'lesson', 'reminder']).optional().describe('Default fact.'),
    importance: z.number().min(0).max(1).optional().describe('Default 0.5.'),
  })
  .strict();

export type MemorySaveArgs = z.output<typeof schema>;

/** `memory_save` (MEMBER): saves a memory in the sender's own scope (private to them). */
export function createMemorySaveTool(deps: { memories: MemoryService }): Tool<MemorySaveArgs> {
  return defineTool({
    name: 'memory_save',
    description: "Saves a fact, lesson or reminder to the user's private long-term memory.",
    schema,
    minTrust: TrustLevel.MEMBER,
    summarizeArgs: (args) => `${args.type ?? 'fact'} of ${args.content.length} characters`,
    async run(tc, args) {
      const userId = tc.ctx.userId;
      if (!userId) throw new ToolRefusedError('Only a known user can save memories.');
      const memory = await deps.memories.create(tc.ctx, {
        content: args.content,
        type: (args.type ?? 'fact') as MemoryType,
        scope: MemoryScope.USER,
        userId,
        importance: args.importance ?? null,
        sourceSessionId: tc.sessionId,
      });
      return { saved: true, id: memory.id, type: memory.type };
    },
  });
}
