import type { WAMessage, proto } from '@whiskeysockets/baileys';
import type { InboundVoice } from '../../modules/voice';
import type { OutboundVoice } from '../channel.types';
import { mapInbound, type MappedInbound, type SelfIdentity } from './whatsapp.mapper';
import type { DownloadWhatsAppMedia, WhatsAppSocket } from './whatsapp-sdk';

// === Voice notes on WhatsApp (issue 26): audio messages in (voice notes, `ptt`, and audio files), voice
// notes out (OGG/Opus with `ptt: true`).

const WRAPPERS = ['ephemeralMessage', 'viewOnceMessage', 'viewOnceMessageV2', 'viewOnceMessageV2Extension', 'editedMessage'] as const;

function audioOf(content: proto.IMessage | null | undefined): proto.Message.IAudioMessage | null {
  let current = content ?? null;
  for (let i = 0; i < 5 && current && !current.audioMessage; i++) current = WRAPPERS.map((w) => current?.[w]?.message).find((m) => m) ?? null;
  return current?.audioMessage ?? null;
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const n = (value as { toNumber?: () => number } | null)?.toNumber?.();
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
}

/**
 * Maps an audio message: the chat, sender and mentions as for text (the mapper), the audio attached to be
 * downloaded once the sender is admitted. Null when the message carries no audio.
 */
export function mapWhatsAppVoice(raw: WAMessage, self: SelfIdentity, sock: WhatsAppSocket, download: DownloadWhatsAppMedia): MappedInbound | null {
  const audio = audioOf(raw?.message);
  if (!audio) return null;
  // The mapper skips messages without text; a stand-in text gets the note past that check.
  const mapped = mapInbound({ ...raw, message: { extendedTextMessage: { text: '🎤', contextInfo: audio.contextInfo ?? null } } }, self);
  if (mapped.kind === 'skip') return mapped;
  const voice: InboundVoice = {
    kind: audio.ptt ? 'voice' : 'audio',
    mimeType: audio.mimetype || 'audio/ogg',
    seconds: toNumber(audio.seconds),
    declaredBytes: toNumber(audio.fileLength),
    fetch: async (maxBytes) => {
      const data = await download(raw, sock);
      return data.length > maxBytes ? null : data;
    },
  };
  return { kind: 'message', message: { ...mapped.message, text: '', voice }, image: null };
}

/** Sends OGG/Opus audio as a voice note (`ptt`), under the message id derived from the delivery key. */
export async function sendWhatsAppVoice(sock: WhatsAppSocket, chatId: string, voice: OutboundVoice, messageId: string): Promise<{ platformMessageId?: string }> {
  const sent = await sock.sendMessage(chatId, { audio: Buffer.from(voice.dataBase64, 'base64'), mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: voice.seconds }, { messageId });
  return { platformMessageId: sent?.key?.id ?? undefined };
}
