import type { WAMessage, proto } from '@whiskeysockets/baileys';
import type { InboundMessage } from '../channel.types';

// Pure mapping between Baileys messages and domain types. Only type imports from Baileys here, so the
// mapper (and its unit tests) never load the SDK runtime; the JID helpers below mirror Baileys'
// `jidDecode` / `jidNormalizedUser` (lib/WABinary/jid-utils.js of 7.0.0-rc14).

/** The channel name of WhatsApp identities (`whatsapp:<jid>`) and sessions. */
export const WHATSAPP_CHANNEL = 'whatsapp';

// === JIDs

/** `user[_agent][:device]@server` → `user@server` (`c.us` becomes `s.whatsapp.net`), or '' when not a JID. */
export function normalizeJid(jid: string | null | undefined): string {
  if (typeof jid !== 'string') return '';
  const at = jid.indexOf('@');
  if (at <= 0) return '';
  const server = jid.slice(at + 1);
  const user = jid.slice(0, at).split(':')[0]!.split('_')[0]!;
  if (!user || !server) return '';
  return `${user}@${server === 'c.us' ? 's.whatsapp.net' : server}`;
}

/** The part before `@` of a normalized JID. */
function jidUser(jid: string): string {
  return jid.slice(0, jid.indexOf('@'));
}

const isGroupJid = (jid: string) => jid.endsWith('@g.us');
const isPnJid = (jid: string) => jid.endsWith('@s.whatsapp.net');
// status@broadcast, broadcast lists and channels (newsletters) are not conversations with the bot.
const isBroadcastLike = (jid: string) => jid.endsWith('@broadcast') || jid.endsWith('@newsletter');

/** Who the bot is on WhatsApp: its phone-number JID and its LID, both without device suffix. */
export interface SelfIdentity {
  jids: ReadonlySet<string>;
}

/**
 * The bot's own JIDs from `sock.user` (`id` is usually `<phone>:<device>@s.whatsapp.net`, `lid`
 * `<lid>:<device>@lid`; Baileys may put either form in `id`). Mentions and quotes may use either.
 */
export function selfIdentity(user: { id?: string | null; lid?: string | null; phoneNumber?: string | null } | null | undefined): SelfIdentity {
  const jids = new Set<string>();
  for (const jid of [user?.id, user?.lid, user?.phoneNumber]) {
    const n = normalizeJid(jid);
    if (n) jids.add(n);
  }
  return { jids };
}

// === Inbound

/** An image the adapter still has to download (Baileys `downloadMediaMessage`). */
export interface PendingImage {
  mimeType: string;
  /** Size the sender declared, when known (checked against the cap before downloading). */
  declaredBytes: number | null;
}

/** The result of mapping one Baileys message: a domain message (images still to fetch) or why it is skipped. */
export type MappedInbound =
  | { kind: 'message'; message: InboundMessage; image: PendingImage | null }
  | { kind: 'skip'; reason: string; malformed?: boolean };

// Wrappers WhatsApp puts around the real content (disappearing, view-once, captioned documents, edits);
// the same list as Baileys' `normalizeMessageContent`.
const WRAPPERS = ['ephemeralMessage', 'viewOnceMessage', 'viewOnceMessageV2', 'viewOnceMessageV2Extension', 'documentWithCaptionMessage', 'editedMessage'] as const satisfies ReadonlyArray<keyof proto.IMessage>;

function unwrap(content: proto.IMessage | null | undefined): proto.IMessage | null {
  let current = content ?? null;
  for (let i = 0; i < 5 && current; i++) {
    const inner = WRAPPERS.map((w) => current?.[w]?.message).find((m) => m);
    if (!inner) break;
    current = inner;
  }
  return current;
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (value && typeof value === 'object' && typeof (value as { toNumber?: unknown }).toNumber === 'function') {
    const n = (value as { toNumber: () => number }).toNumber();
    return Number.isFinite(n) ? n : null;
  }
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  return null;
}

function stripSelfMentions(text: string, self: SelfIdentity): string {
  let out = text;
  for (const jid of self.jids) {
    const user = jidUser(jid).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`@${user}(?!\\d)`, 'g'), ' ');
  }
  return out.replace(/[ \t]{2,}/g, ' ').replace(/^[ \t]+|[ \t]+$/gm, '').trim();
}

/**
 * The sender handle: the participant in groups, the chat in DMs, normalized. When the chat uses a LID
 * and Baileys also knows the phone-number JID (`participantAlt` / `remoteJidAlt`), the phone-number
 * JID wins, so the same person keeps one identity (and `allow_from` can list phone numbers).
 */
function senderHandle(key: WAMessage['key'], group: boolean): string {
  const primary = normalizeJid(group ? key.participant : key.remoteJid);
  const alt = normalizeJid(group ? key.participantAlt : key.remoteJidAlt);
  return !isPnJid(primary) && isPnJid(alt) ? alt : primary;
}

/**
 * Maps one `messages.upsert` message to an {@link InboundMessage}. Own messages, broadcasts, protocol
 * messages (receipts, edits, deletes), reactions and messages without text or image are skipped;
 * malformed ones are skipped with `malformed: true`. Never throws on odd input.
 */
export function mapInbound(msg: WAMessage, self: SelfIdentity): MappedInbound {
  const key = msg?.key;
  const remoteJid = typeof key?.remoteJid === 'string' ? key.remoteJid : '';
  if (!key || !remoteJid) return { kind: 'skip', reason: 'no chat id', malformed: true };
  if (key.fromMe) return { kind: 'skip', reason: 'own message' };
  if (isBroadcastLike(remoteJid)) return { kind: 'skip', reason: 'broadcast' };
  const content = unwrap(msg.message);
  if (!content) return { kind: 'skip', reason: 'no content' };
  if (content.protocolMessage) return { kind: 'skip', reason: 'protocol message' };
  if (content.reactionMessage) return { kind: 'skip', reason: 'reaction' };

  const group = isGroupJid(remoteJid);
  const sender = senderHandle(key, group);
  if (!sender) return { kind: 'skip', reason: group ? 'group message without participant' : 'no sender', malformed: true };

  const image = content.imageMessage ?? null;
  const rawText = content.conversation ?? content.extendedTextMessage?.text ?? image?.caption ?? '';
  if (typeof rawText !== 'string') return { kind: 'skip', reason: 'text is not a string', malformed: true };
  if (!rawText.trim() && !image) return { kind: 'skip', reason: 'no text or image' };

  const context = content.extendedTextMessage?.contextInfo ?? image?.contextInfo ?? null;
  const mentioned = (context?.mentionedJid ?? []).some((jid) => self.jids.has(normalizeJid(jid)));
  const quotedBot = Boolean(context?.stanzaId) && self.jids.has(normalizeJid(context?.participant));
  const seconds = toNumber(msg.messageTimestamp);

  const message: InboundMessage = {
    channel: WHATSAPP_CHANNEL,
    chatId: group ? remoteJid : normalizeJid(remoteJid),
    chatKind: group ? 'group' : 'dm',
    sender: { handle: sender, displayName: msg.pushName || null },
    text: mentioned ? stripSelfMentions(rawText, self) : rawText.trim(),
    mentionsBot: mentioned || quotedBot,
    replyTo: context?.stanzaId || null,
    platformMessageId: key.id || null,
    receivedAt: seconds ? new Date(seconds * 1000) : new Date(),
  };
  const pending = image ? { mimeType: image.mimetype || 'image/jpeg', declaredBytes: toNumber(image.fileLength) } : null;
  return { kind: 'message', message, image: pending };
}
