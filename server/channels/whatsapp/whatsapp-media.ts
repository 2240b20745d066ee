import type { WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from '../../common/logger';
import type { InboundImage } from '../../modules/conversation';
import type { PendingImage } from './whatsapp.mapper';
import { loadBaileys, type DownloadWhatsAppMedia, type WhatsAppSocket } from './whatsapp-sdk';

/** Images above this size are not passed to the model (same cap as the web channel). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 30_000;

/** Baileys' `downloadMediaMessage` into a Buffer, asking the sender's phone to re-upload expired media. */
export function baileysDownloader(logger: Logger): DownloadWhatsAppMedia {
  return async (message, socket) => {
    const baileys = await loadBaileys();
    const reupload = (socket as Partial<{ updateMediaMessage: (m: WAMessage) => Promise<WAMessage> }>).updateMediaMessage;
    const ctx = reupload ? { logger, reuploadRequest: reupload } : undefined;
    return baileys.downloadMediaMessage(message, 'buffer', { options: { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) } }, ctx);
  };
}

/**
 * Downloads the image of a message as base64, or returns null (logged) when it is over 5 MiB — checked
 * against the declared size before downloading and the real size after — or cannot be fetched.
 */
export async function fetchInboundImage(
  raw: WAMessage,
  socket: WhatsAppSocket,
  pending: PendingImage,
  download: DownloadWhatsAppMedia,
  logger: Logger,
): Promise<InboundImage | null> {
  if (pending.declaredBytes !== null && pending.declaredBytes > MAX_IMAGE_BYTES) {
    logger.info({ bytes: pending.declaredBytes }, 'whatsapp image over 5 MiB ignored');
    return null;
  }
  try {
    const data = await download(raw, socket);
    if (data.length <= MAX_IMAGE_BYTES) return { mimeType: pending.mimeType, dataBase64: data.toString('base64') };
    logger.info({ bytes: data.length }, 'whatsapp image over 5 MiB ignored');
  } catch (err) {
    logger.warn({ err }, 'whatsapp image could not be downloaded');
  }
  return null;
}
