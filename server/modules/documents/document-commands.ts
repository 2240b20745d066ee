import type { Ctx } from '../../common/ctx';
import { TrustLevel } from '../../common/trust';
import type { CommandResult, SlashCommandService } from '../commands';
import { memoryGroupIdOf } from '../memory';
import type { Session } from '../sessions';
import type { DocumentService } from './document.service';
import { DocumentStatus } from './document.types';

const SHOWN = 15;

/** `/docs`: the sender's documents in a direct chat, the group's collection in a group chat. */
export function registerDocumentCommands(commands: SlashCommandService, deps: { documents: DocumentService }): void {
  commands.extend({
    names: ['docs'],
    minTrust: TrustLevel.MEMBER,
    help: '/docs — your documents (in a group: the group’s collection); send a PDF, Word, Markdown, text, HTML or CSV file to add one',
    run: (ctx, session) => listDocs(ctx, session, deps.documents),
  });
}

async function listDocs(ctx: Ctx, session: Session, documents: DocumentService): Promise<CommandResult> {
  if (!ctx.userId) return { reply: 'I do not know you yet.' };
  const groupId = memoryGroupIdOf(session);
  const { docs, total } = await documents.listForChat(ctx, groupId, SHOWN);
  if (!total) return { reply: groupId ? 'This group has no documents yet. Send one (mentioning me) to add it.' : 'You have no documents yet. Send me a PDF, Word, Markdown, text, HTML or CSV file.' };
  const lines = docs.map((d) => {
    const state =
      d.status === DocumentStatus.READY
        ? `${d.pages ? `${d.pages} p., ` : ''}${d.chunkCount} passages`
        : d.status === DocumentStatus.FAILED
          ? `failed: ${d.error ?? 'unknown reason'}`
          : `${d.status.toLowerCase()} ${d.progress}%`;
    return `• ${d.name} — ${state}`;
  });
  const more = total > docs.length ? `\n…and ${total - docs.length} more (GraphQL \`documents\` lists them all).` : '';
  return { reply: `${groupId ? 'Documents of this group' : 'Your documents'} (${total}):\n${lines.join('\n')}${more}` };
}
