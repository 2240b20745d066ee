import type { Ctx } from '../../common/ctx';
import { TrustLevel } from '../../common/trust';
import type { CommandResult, SlashCommandService } from '../commands';
import type { Session } from '../sessions';
import { ChatKind } from '../sessions';
import type { MemoryService } from './memory.service';
import { MemoryScope } from './memory.types';

const SHOWN = 10;
const PREVIEW_CHARS = 100;

/** `/memories`: the sender's own memories, newest first (only in a direct chat: they are private). */
export function registerMemoryCommands(commands: SlashCommandService, deps: { memories: MemoryService }): void {
  commands.extend({
    names: ['memories'],
    minTrust: TrustLevel.MEMBER,
    help: '/memories — what I remember about you (in a direct chat)',
    run: (ctx, session) => listOwn(ctx, session, deps.memories),
  });
}

async function listOwn(ctx: Ctx, session: Session, memories: MemoryService): Promise<CommandResult> {
  if (session.chatKind === ChatKind.GROUP) return { reply: 'Your memories are private — ask me /memories in a direct chat.' };
  if (!ctx.userId) return { reply: 'I do not know you yet.' };
  const page = await memories.findMany(ctx, { scope: MemoryScope.USER, userId: ctx.userId }, { first: SHOWN, afterId: null });
  if (!page.totalCount) return { reply: 'I have no memories about you yet.' };
  const lines = page.nodes.map((m) => {
    const text = m.content.replace(/\s+/g, ' ').trim();
    const preview = text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
    return `• (${m.type}${m.source ? `, ${m.source.replace(/^workspace:/, '')}` : ''}) ${preview}`;
  });
  const more = page.totalCount > page.nodes.length ? `\n…and ${page.totalCount - page.nodes.length} more (the admin UI or GraphQL \`memories\` lists them all).` : '';
  return { reply: `What I remember about you (${page.totalCount}):\n${lines.join('\n')}${more}` };
}
