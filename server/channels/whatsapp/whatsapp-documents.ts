import type { WAMessage, proto } from '@whiskeysockets/baileys';
import type { InboundDocument } from '../../modules/documents';
import { mapInbound, type MappedInbound, type SelfIdentity } from './whatsapp.mapper';
import type { DownloadWhatsAppMedia, WhatsAppSocket } from './whatsapp-sdk';

// === Documents sent on WhatsApp (issue 27): document messages (with or without caption) become documents
// to add, downloaded once the sender is admitted.

const WRAPPERS = ['ephemeralMessage', 'viewOnceMessage', 'viewOnceMessageV2', 'viewOnceMessageV2Extension', 'documentWithCaptionMessage', 'editedMessage'] as const;

function documentOf(content: proto.IMessage | null | undefined): proto.Message.IDocumentMessage | null {
  let current = content ?? null;
  for (let i = 0; i < 5 && current && !current.documentMessage; i++) current = WRAPPERS.map((w) => current?.[w]?.message).find((m) => m) ?? null;
  return current?.documentMessage ?? null;
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const n = (value as { toNumber?: () => number } | null)?.toNumber?.();
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
}

/** Maps a document message: chat, sender and mentions as for text, the file attached. Null when there is no document. */
export function mapWhatsAppDocument(raw: WAMessage, self: SelfIdentity, sock: WhatsAppSocket, download: DownloadWhatsAppMedia): MappedInbound | null {
  const doc = documentOf(raw?.message);
  if (!doc || (doc.mimetype ?? '').startsWith('image/')) return null;
  const caption = typeof doc.caption === 'string' ? doc.caption : '';
  // The mapper skips messages without text; a stand-in text gets the file past that check.
  const mapped = mapInbound({ ...raw, message: { extendedTextMessage: { text: caption.trim() || '📄', contextInfo: doc.contextInfo ?? null } } }, self);
  if (mapped.kind === 'skip') return mapped;
  const document: InboundDocument = {
    name: doc.fileName || doc.title || 'document',
    mimeType: doc.mimetype ?? '',
    declaredBytes: toNumber(doc.fileLength),
    fetch: async (maxBytes) => {
      const data = await download(raw, sock);
      return data.length > maxBytes ? null : data;
    },
  };
  return { kind: 'message', message: { ...mapped.message, text: caption.trim() ? mapped.message.text : '', document }, image: null };
}
