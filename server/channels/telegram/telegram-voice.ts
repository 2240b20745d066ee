import { InputFile, type Bot } from 'grammy';
import type { Message } from 'grammy/types';
import type { InboundVoice } from '../../modules/voice';
import type { OutboundVoice } from '../channel.types';
import { apiSignal } from './telegram-bot';
import { downloadBotFile } from './telegram-files';
import { mapTelegramMessage, type TelegramBotIdentity, type TelegramMapping } from './telegram.mapper';

// === Voice notes on Telegram (issue 26): `voice`, `audio` and `video_note` messages in, sendVoice out.

/** Fetches a Bot API file by id, reading at most `maxBytes` (null when larger). */
export type TelegramFileFetcher = (fileId: string, maxBytes: number, signal?: AbortSignal) => Promise<Buffer | null>;

/** The voice note, audio file or round video of a message, to be fetched later; null for other messages. */
export function telegramVoiceOf(msg: Message, fetchFile: TelegramFileFetcher): InboundVoice | null {
  const kind = msg.voice ? 'voice' : msg.audio ? 'audio' : msg.video_note ? 'video_note' : null;
  if (!kind) return null;
  const file = (msg.voice ?? msg.audio ?? msg.video_note)!;
  const declared = (file as { mime_type?: string }).mime_type;
  const mimeType = declared ?? (kind === 'voice' ? 'audio/ogg' : kind === 'audio' ? 'audio/mpeg' : 'video/mp4');
  return {
    kind,
    mimeType,
    seconds: typeof file.duration === 'number' ? file.duration : null,
    declaredBytes: typeof file.file_size === 'number' ? file.file_size : null,
    fetch: (maxBytes, signal) => fetchFile(file.file_id, maxBytes, signal),
  };
}

/**
 * Maps a message carrying a voice note like any other (chat, sender, mentions, reply-to), with the note
 * attached and its caption, if any, as the text.
 */
export function mapTelegramVoice(msg: Message, bot: TelegramBotIdentity, voice: InboundVoice): TelegramMapping {
  const captioned = Boolean(msg.caption?.trim());
  // The mapper skips messages without text; a stand-in caption gets the note past that check.
  const mapped = mapTelegramMessage(captioned ? msg : ({ ...msg, caption: '🎤' } as Message), bot);
  if (!mapped.ok) return mapped;
  if (!captioned) mapped.message.text = '';
  mapped.message.voice = voice;
  return { ...mapped, media: null };
}

/** `getFile`, then the download from the file endpoint; errors never name the token (see downloadBotFile). */
export function telegramFileFetcher(bot: Bot, apiRoot: string, token: string): TelegramFileFetcher {
  return async (fileId, maxBytes, signal) => {
    const file = await bot.api.getFile(fileId, apiSignal(signal));
    if (!file.file_path) throw new Error('getFile returned no file_path');
    if ((file.file_size ?? 0) > maxBytes) return null;
    return downloadBotFile(`${apiRoot}/file/bot${token}/${file.file_path}`, maxBytes, signal);
  };
}

/** Sends OGG/Opus audio as a voice message (shown with a waveform and its length). */
export async function sendTelegramVoice(bot: Bot, chatId: string, voice: OutboundVoice, signal?: AbortSignal): Promise<{ platformMessageId: string }> {
  const audio = new InputFile(Buffer.from(voice.dataBase64, 'base64'), 'reply.ogg');
  const sent = await bot.api.sendVoice(chatId, audio, { duration: voice.seconds }, apiSignal(signal));
  return { platformMessageId: String(sent.message_id) };
}
