import type { Message } from 'grammy/types';
import type { InboundDocument } from '../../modules/documents';
import type { TelegramFileFetcher } from './telegram-voice';
import { mapTelegramMessage, type TelegramBotIdentity, type TelegramMapping } from './telegram.mapper';

// === Documents sent on Telegram (issue 27): a `document` message that is not an image becomes a document
// to add (images sent as files stay images, for the model to see).

const IMAGE_MIME = /^image\//;

/** The file of a `document` message, to be fetched later; null for other messages and for images. */
export function telegramDocumentOf(msg: Message, fetchFile: TelegramFileFetcher): InboundDocument | null {
  const doc = msg.document;
  if (!doc || IMAGE_MIME.test(doc.mime_type ?? '')) return null;
  return {
    name: doc.file_name ?? 'document',
    mimeType: doc.mime_type ?? '',
    declaredBytes: typeof doc.file_size === 'number' ? doc.file_size : null,
    fetch: (maxBytes, signal) => fetchFile(doc.file_id, maxBytes, signal),
  };
}

/** Maps a message carrying a document like any other (chat, sender, mentions), with the file attached. */
export function mapTelegramDocument(msg: Message, bot: TelegramBotIdentity, document: InboundDocument): TelegramMapping {
  const captioned = Boolean(msg.caption?.trim());
  // The mapper skips messages without text; a stand-in caption gets the file past that check.
  const mapped = mapTelegramMessage(captioned ? msg : ({ ...msg, caption: '📄' } as Message), bot);
  if (!mapped.ok) return mapped;
  if (!captioned) mapped.message.text = '';
  mapped.message.document = document;
  return { ...mapped, media: null };
}
