import type { Message, MessageEntity, User } from 'grammy/types';
import type { ChatKindName, InboundMessage } from '../channel.types';

/** The bot itself, as `getMe` reports it: used to recognise mentions of it and replies to it. */
export interface TelegramBotIdentity {
  id: number;
  username: string;
}

/** An image attached to a message, still on Telegram's servers (fetched with `getFile`). */
export interface TelegramMediaRef {
  fileId: string;
  /** Size Telegram reports, when it does. */
  fileSize: number | null;
  mimeType: string;
}

/** The result of mapping one Telegram message: an inbound message (plus an image to fetch) or a reason to skip it. */
export type TelegramMapping = { ok: true; message: InboundMessage; media: TelegramMediaRef | null } | { ok: false; reason: string };

const IMAGE_MIME = /^image\/(jpeg|png|webp|gif)$/;
/** Message kinds we do not answer, named in the skip reason (first match wins). */
const UNSUPPORTED_KINDS = ['sticker', 'voice', 'video_note', 'video', 'audio', 'animation', 'document', 'location', 'venue', 'contact', 'poll', 'dice', 'game', 'story'] as const;

/**
 * Maps a Telegram `message` to the channel-neutral {@link InboundMessage} (DESIGN §2.1): sender handle
 * = Telegram user id, chat id, `dm` for private chats and `group` for groups and supergroups. Text or
 * caption becomes the text; a mention of the bot (`@username`, a `text_mention` of it, or a
 * `/command@username`) and a reply to one of the bot's messages set `mentionsBot`, and the mention is
 * cut out of the text. The largest photo (or an image sent as a file) is returned as a media reference.
 * Channel posts, messages of bots, service messages and unsupported kinds (stickers, voice, …) are
 * returned as `{ ok: false, reason }`; this function never throws on odd input.
 */
export function mapTelegramMessage(msg: Message, bot: TelegramBotIdentity): TelegramMapping {
  const chatKind = chatKindOf(msg.chat?.type);
  if (!chatKind) return { ok: false, reason: `chat type ${String(msg.chat?.type)}` };
  const from = msg.from;
  if (!from) return { ok: false, reason: 'no sender' };
  if (from.is_bot) return { ok: false, reason: 'sent by a bot' };
  const media = mediaOf(msg);
  const raw = msg.text ?? msg.caption ?? '';
  if (!raw.trim() && !media) return { ok: false, reason: `unsupported message (${kindOf(msg)})` };
  const { text, mentioned } = stripBotMentions(raw, msg.entities ?? msg.caption_entities ?? [], bot);
  const reply = msg.reply_to_message;
  return {
    ok: true,
    media,
    message: {
      channel: 'telegram',
      chatId: String(msg.chat.id),
      chatKind,
      sender: { handle: String(from.id), displayName: displayName(from) },
      text,
      mentionsBot: mentioned || reply?.from?.id === bot.id,
      replyTo: reply ? String(reply.message_id) : null,
      platformMessageId: String(msg.message_id),
      receivedAt: typeof msg.date === 'number' ? new Date(msg.date * 1000) : new Date(),
    },
  };
}

function chatKindOf(type: string | undefined): ChatKindName | null {
  if (type === 'private') return 'dm';
  if (type === 'group' || type === 'supergroup') return 'group';
  return null;
}

function displayName(user: User): string {
  return [user.first_name, user.last_name].filter(Boolean).join(' ') || user.username || String(user.id);
}

function mediaOf(msg: Message): TelegramMediaRef | null {
  if (msg.photo?.length) {
    // Largest by pixels (Telegram lists sizes smallest first, so a tie goes to the later one).
    const largest = msg.photo.reduce((a, b) => (b.width * b.height >= a.width * a.height ? b : a));
    return { fileId: largest.file_id, fileSize: largest.file_size ?? null, mimeType: 'image/jpeg' };
  }
  const doc = msg.document;
  if (doc?.mime_type && IMAGE_MIME.test(doc.mime_type)) return { fileId: doc.file_id, fileSize: doc.file_size ?? null, mimeType: doc.mime_type };
  return null;
}

function kindOf(msg: Message): string {
  const record = msg as unknown as Record<string, unknown>;
  return UNSUPPORTED_KINDS.find((k) => record[k] !== undefined) ?? 'no text';
}

/**
 * Finds mentions of the bot among the entities and removes them from the text. Offsets are UTF-16
 * code units, like JavaScript strings. Commands keep their name (`/help@bot` → `/help`); a command
 * without `@username` counts as addressed to the bot (Telegram sends it to every bot in the group).
 */
export function stripBotMentions(text: string, entities: readonly MessageEntity[], bot: TelegramBotIdentity): { text: string; mentioned: boolean } {
  const handle = `@${bot.username}`.toLowerCase();
  let out = text;
  let mentioned = false;
  const ordered = [...entities].filter((e) => e.offset >= 0 && e.offset + e.length <= text.length).sort((a, b) => b.offset - a.offset);
  for (const e of ordered) {
    const slice = text.slice(e.offset, e.offset + e.length);
    if ((e.type === 'mention' && slice.toLowerCase() === handle) || (e.type === 'text_mention' && e.user?.id === bot.id)) {
      out = cut(out, e.offset, e.length);
      mentioned = true;
    } else if (e.type === 'bot_command' && e.offset === 0) {
      const at = slice.indexOf('@');
      if (at < 0) mentioned = true;
      else if (slice.slice(at).toLowerCase() === handle) {
        out = out.slice(0, at) + out.slice(e.length);
        mentioned = true;
      }
    }
  }
  return { text: out.trim(), mentioned };
}

/** Removes `length` characters at `offset`, tidying the punctuation and spaces left around the cut. */
function cut(text: string, offset: number, length: number): string {
  let before = text.slice(0, offset);
  let after = text.slice(offset + length);
  if (!before.trim()) after = after.replace(/^[\s,:;]+/, '');
  else if (/\s$/.test(before) && /^(\s|[,.:;!?]|$)/.test(after)) before = before.replace(/\s+$/, '');
  return before + after;
}
