import type * as Baileys from '@whiskeysockets/baileys';
import type { AnyMessageContent, BaileysEventMap, MiscMessageGenerationOptions, UserFacingSocketConfig, WAMessage, WAPresence } from '@whiskeysockets/baileys';

/** The Baileys module (ESM-only; loaded on first use, so a process without WhatsApp never loads it). */
export type BaileysModule = typeof Baileys;

let loading: Promise<BaileysModule> | null = null;

/** Loads `@whiskeysockets/baileys` once (Node 20 `import()` of an ESM package from CommonJS). */
export function loadBaileys(): Promise<BaileysModule> {
  loading ??= import('@whiskeysockets/baileys');
  return loading;
}

/**
 * The part of a Baileys socket the adapter uses. `makeWASocket(...)` satisfies it; tests drive an object
 * with the same shape (an EventEmitter as `ev`).
 */
export interface WhatsAppSocket {
  ev: {
    on<K extends keyof BaileysEventMap>(event: K, listener: (arg: BaileysEventMap[K]) => void): void;
    off<K extends keyof BaileysEventMap>(event: K, listener: (arg: BaileysEventMap[K]) => void): void;
  };
  /** The linked account (`id` = phone-number JID with device, `lid` = its LID); undefined before linking. */
  user?: { id: string; lid?: string; phoneNumber?: string } | undefined;
  sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<WAMessage | undefined>;
  sendPresenceUpdate(type: WAPresence, toJid?: string): Promise<void>;
  end(error: Error | undefined): void | Promise<void>;
}

/** Builds a socket; defaults to Baileys' `makeWASocket`. */
export type MakeWhatsAppSocket = (config: UserFacingSocketConfig) => WhatsAppSocket;

/** Downloads the media of a message as a Buffer; defaults to Baileys' `downloadMediaMessage`. */
export type DownloadWhatsAppMedia = (message: WAMessage, socket: WhatsAppSocket) => Promise<Buffer>;

/** Reads the HTTP-like status code Baileys puts on close errors (`Boom.output.statusCode`). */
export function disconnectCode(error: unknown): number | null {
  const code = (error as { output?: { statusCode?: unknown } } | null | undefined)?.output?.statusCode;
  return typeof code === 'number' ? code : null;
}
