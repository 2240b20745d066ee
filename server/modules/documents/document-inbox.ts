import type { Ctx } from '../../common/ctx';
import { AppError } from '../../common/errors';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import { memoryGroupIdOf, MemoryScope } from '../memory';
import type { Session } from '../sessions';
import type { DocumentService } from './document.service';
import { unsupportedTypeMessage } from './document.service';
import { claimedKind } from './extract/document-format';

/** A file sent in a chat (Telegram document, WhatsApp document message), to be downloaded once the sender is admitted. */
export interface InboundDocument {
  /** File name as sent. */
  name: string;
  /** Declared media type ('' when none). */
  mimeType: string;
  /** Declared size in bytes, when known (checked before downloading). */
  declaredBytes: number | null;
  /** Downloads the file, reading at most `maxBytes`; null when it is larger. Throws when it cannot be fetched. */
  fetch(maxBytes: number, signal?: AbortSignal): Promise<Buffer | null>;
}

/** Where a chat document came from. */
export interface DocumentOrigin {
  session: Session;
  trust: TrustLevel;
  channel: string;
  chatId: string;
}

/**
 * Documents sent in chats: checked (trust, type, size — before the download where the platform declares
 * them), downloaded, added as the sender's private document in a direct chat or to the group's collection
 * in a group chat, and queued; the chat is told at once, and again when the document is READY or FAILED.
 */
export class DocumentInbox {
  constructor(private readonly documents: DocumentService) {}

  async accept(ctx: Ctx, doc: InboundDocument, origin: DocumentOrigin): Promise<{ reply: string; queued: boolean }> {
    if (!trustAtLeast(origin.trust, TrustLevel.MEMBER)) return { reply: 'Documents can be added by members only.', queued: false };
    const max = this.documents.limits.maxBytes;
    const tooLarge = { reply: `"${doc.name}" is too large; documents may be at most ${Math.round(max / 1024 / 1024)} MB.`, queued: false };
    if (!claimedKind(doc.name, doc.mimeType)) return { reply: unsupportedTypeMessage(doc.name, doc.mimeType), queued: false };
    if (doc.declaredBytes !== null && doc.declaredBytes > max) return tooLarge;
    let data: Buffer | null;
    try {
      data = await doc.fetch(max, ctx.signal);
    } catch (err) {
      ctx.logger.warn({ err: (err as Error).message, channel: origin.channel }, 'document download failed');
      return { reply: `⚠️ I could not download "${doc.name}"; please send it again.`, queued: false };
    }
    if (!data) return tooLarge;
    const groupId = memoryGroupIdOf(origin.session);
    try {
      const added = await this.documents.add(ctx, {
        name: doc.name,
        mimeType: doc.mimeType,
        data,
        scope: groupId ? MemoryScope.GROUP : MemoryScope.USER,
        groupId,
        source: { channel: origin.channel, chatId: origin.chatId },
      });
      const where = groupId ? ' to this group’s documents' : '';
      return { reply: `📄 Got "${added.name}"${where} — reading it now; I will tell you when it is ready.`, queued: true };
    } catch (err) {
      if (err instanceof AppError) return { reply: `⚠️ ${err.message}`, queued: false };
      throw err;
    }
  }
}
