import { createHash } from 'node:crypto';
import path from 'node:path';
import type { ConnectionState, WAMessage } from '@whiskeysockets/baileys';
import qrcodeTerminal from 'qrcode-terminal';
import type { Logger } from '../../common/logger';
import type { AppConfig } from '../../config';
import { ChannelOfflineError, type ChannelState, type ChannelStatus, type ChannelTransport, type InboundMessage, type InboundSink, type OutboundChunk, type OutboundVoice } from '../channel.types';
import { ComposingPresence } from './composing-presence';
import { SendRateLimiter } from './send-rate-limiter';
import { clearWhatsAppAuth, openWhatsAppAuth, type WhatsAppAuth } from './whatsapp-auth-state';
import { baileysDownloader, fetchInboundImage } from './whatsapp-media';
import { mapInbound, selfIdentity, WHATSAPP_CHANNEL } from './whatsapp.mapper';
import { mapWhatsAppVoice, sendWhatsAppVoice } from './whatsapp-voice';
import { mapWhatsAppDocument } from './whatsapp-documents';
import { disconnectCode, loadBaileys, type DownloadWhatsAppMedia, type MakeWhatsAppSocket, type WhatsAppSocket } from './whatsapp-sdk';

const LOGGED_OUT = 401; // DisconnectReason.loggedOut
const RESTART_REQUIRED = 515; // DisconnectReason.restartRequired: sent right after a successful link
/** Hints for the operator on close codes that usually need a person (DisconnectReason values). */
const CLOSE_HINTS: Record<number, string> = {
  440: 'replaced by another connection with the same link (is a second process running WhatsApp?)',
  403: 'forbidden by WhatsApp (the account may be banned or restricted)',
};

/** Options of {@link WhatsAppTransport}. */
export interface WhatsAppTransportOptions {
  /** Folder of the linked-device credentials (`<data_dir>/whatsapp/auth`). */
  authDir: string;
  logger: Logger;
  /** Outbound messages per second per chat. @default 1 */
  perChatPerSecond?: number;
  /** Outbound messages per rolling minute overall. @default 20 */
  perMinute?: number;
  /** Called on every status change (channels query, channelStatus subscription). */
  onStatus?: (transport: ChannelTransport) => void;
  /** Socket factory; tests pass a fake with Baileys' `ev` interface. @default Baileys' `makeWASocket` */
  makeSocket?: MakeWhatsAppSocket;
  /** Media download. @default Baileys' `downloadMediaMessage` */
  downloadMedia?: DownloadWhatsAppMedia;
  /** WhatsApp Web endpoint (tests point it at a local ws server). @default Baileys' own */
  waWebSocketUrl?: string;
  /** First reconnect delay; doubles per failed attempt. @default 1000 */
  reconnectBaseMs?: number;
  /** Longest reconnect delay. @default 60000 */
  reconnectMaxMs?: number;
  /** Where the linking QR is drawn. @default process.stdout */
  printQr?: (rendered: string) => void;
  /** Level of Baileys' own (chatty) logs. @default 'warn' */
  sdkLogLevel?: string;
  /** How often "composing…" is sent again while a turn runs (clients drop it after about 25 s). @default 10000 */
  composingRefreshMs?: number;
}

/**
 * WhatsApp through Baileys (a linked device of the owner's phone). Keeps one socket: prints and exposes
 * the linking QR while unlinked (state `NEEDS_LINK`), reconnects with exponential back-off after every
 * close except logged-out (then the stale credentials are removed and a new QR is offered), maps
 * `messages.upsert` to the inbound sink in arrival order, and paces sends per chat and per minute.
 */
export class WhatsAppTransport implements ChannelTransport {
  readonly channel = WHATSAPP_CHANNEL;
  readonly maxMessageLength = 4000;

  private readonly limiter: SendRateLimiter;
  private current: ChannelStatus = { channel: WHATSAPP_CHANNEL, state: 'STOPPED', lastError: null, qr: null, updatedAt: new Date() };
  private sink: InboundSink | null = null;
  private sock: WhatsAppSocket | null = null;
  private detach: (() => void) | null = null;
  private auth: WhatsAppAuth | null = null;
  private stopped = true;
  /** Bumped by stop(): a connect() still loading from an earlier run must not create a socket. */
  private run = 0;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private lastQr: string | null = null;
  private inbound: Promise<void> = Promise.resolve();
  private saving: Promise<void> = Promise.resolve();
  private readonly typing: ComposingPresence;

  constructor(private readonly options: WhatsAppTransportOptions) {
    this.limiter = new SendRateLimiter({ perChatPerSecond: options.perChatPerSecond, perMinute: options.perMinute });
    this.typing = new ComposingPresence((type, chatId) => this.presence(type, chatId), options.composingRefreshMs);
  }

  status(): ChannelStatus {
    return { ...this.current };
  }

  async start(sink: InboundSink): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.sink = sink;
    this.attempt = 0;
    this.setStatus({ state: 'STARTING', lastError: null, qr: null });
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.run += 1;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.typing.clear();
    const sock = this.sock;
    this.dropSocket();
    await sock?.end(undefined);
    await this.inbound;
    await this.saving;
    this.setStatus({ state: 'STOPPED', qr: null });
  }

  /**
   * Sends under a message id derived from the chunk's idempotency key: when the connection drops after
   * WhatsApp took the message but before the send returned, the retry carries the same id, and WhatsApp
   * (which identifies messages by id) shows it once.
   */
  async send(chunk: OutboundChunk, signal?: AbortSignal): Promise<{ platformMessageId?: string }> {
    this.connected(); // fail fast (the outbound queue retries) rather than hold a slot while offline
    await this.limiter.acquire(chunk.chatId, signal);
    try {
      const sent = await this.connected().sendMessage(chunk.chatId, { text: chunk.text }, { messageId: messageIdOf(chunk.idempotencyKey) });
      return { platformMessageId: sent?.key?.id ?? undefined };
    } finally {
      this.limiter.sent(chunk.chatId);
    }
  }

  /** A spoken reply as a voice note, paced and idempotent like text. */
  async sendVoice(chatId: string, voice: OutboundVoice, idempotencyKey: string, signal?: AbortSignal): Promise<{ platformMessageId?: string }> {
    this.connected();
    await this.limiter.acquire(chatId, signal);
    try {
      return await sendWhatsAppVoice(this.connected(), chatId, voice, messageIdOf(idempotencyKey));
    } finally {
      this.limiter.sent(chatId);
    }
  }

  /** Shows "composing…" (kept alive while on) or "paused". Never throws. */
  setTyping(chatId: string, on: boolean): Promise<void> {
    return this.typing.set(chatId, on);
  }

  private async presence(type: 'composing' | 'paused', chatId: string): Promise<void> {
    if (!this.sock || this.current.state !== 'CONNECTED') return;
    try {
      await this.sock.sendPresenceUpdate(type, chatId);
    } catch (err) {
      this.options.logger.debug({ err, chatId }, 'whatsapp presence update failed');
    }
  }

  private connected(): WhatsAppSocket {
    if (!this.sock || this.current.state !== 'CONNECTED') throw new ChannelOfflineError(`WhatsApp is not connected (${this.current.state})`);
    return this.sock;
  }

  // === Connection

  private setStatus(patch: Partial<Pick<ChannelStatus, 'state' | 'lastError' | 'qr'>>): void {
    this.current = { ...this.current, ...patch, updatedAt: new Date() };
    try {
      this.options.onStatus?.(this);
    } catch (err) {
      // runs inside Baileys' event emitter: a failing listener must not break the socket
      this.options.logger.warn({ err }, 'whatsapp status listener failed');
    }
  }

  private async connect(): Promise<void> {
    this.reconnectTimer = null;
    const run = this.run;
    if (this.stopped) return;
    const { logger } = this.options;
    try {
      const baileys = await loadBaileys();
      this.auth ??= await openWhatsAppAuth(baileys, this.options.authDir, this.sdkLogger());
      if (this.stopped || run !== this.run) return;
      const makeSocket = this.options.makeSocket ?? (baileys.makeWASocket as MakeWhatsAppSocket);
      const sock = makeSocket({
        auth: this.auth.state,
        logger: this.sdkLogger(),
        browser: baileys.Browsers.ubuntu('Muninn'),
        markOnlineOnConnect: false, // keep notifications on the phone
        syncFullHistory: false,
        shouldIgnoreJid: (jid) => jid.endsWith('@broadcast') || jid.endsWith('@newsletter'),
        ...(this.options.waWebSocketUrl ? { waWebSocketUrl: this.options.waWebSocketUrl } : {}),
      });
      this.attach(sock);
      if (!this.auth.linked) this.setStatus({ state: 'NEEDS_LINK', qr: null });
      else if (this.current.state !== 'STARTING') this.setStatus({ state: 'STARTING' });
    } catch (err) {
      logger.error({ err }, 'whatsapp socket could not be created');
      this.scheduleReconnect(`socket could not be created: ${(err as Error).message}`, null);
    }
  }

  private sdkLogger(): Logger {
    return this.options.logger.child({ module: 'baileys' }, { level: this.options.sdkLogLevel ?? 'warn' });
  }

  private attach(sock: WhatsAppSocket): void {
    const onConnection = (update: Partial<ConnectionState>) => this.onConnection(sock, update);
    const onCreds = () => {
      const auth = this.auth;
      if (auth) this.saving = this.saving.then(() => auth.save()).catch((err: unknown) => this.options.logger.error({ err }, 'whatsapp credentials not saved'));
    };
    const onMessages = ({ messages, type }: { messages: WAMessage[]; type: string }) => {
      if (type !== 'notify' || !Array.isArray(messages)) return;
      this.inbound = this.inbound.then(() => this.deliverInbound(sock, messages));
    };
    sock.ev.on('connection.update', onConnection);
    sock.ev.on('creds.update', onCreds);
    sock.ev.on('messages.upsert', onMessages);
    this.sock = sock;
    this.detach = () => {
      sock.ev.off('connection.update', onConnection);
      sock.ev.off('creds.update', onCreds);
      sock.ev.off('messages.upsert', onMessages);
    };
  }

  private dropSocket(): void {
    this.detach?.();
    this.detach = null;
    this.sock = null;
  }

  private onConnection(sock: WhatsAppSocket, update: Partial<ConnectionState>): void {
    if (sock !== this.sock || this.stopped) return;
    const { logger } = this.options;
    if (update.qr && update.qr !== this.lastQr) {
      this.lastQr = update.qr;
      this.printQr(update.qr);
      this.setStatus({ state: 'NEEDS_LINK', qr: update.qr });
    }
    if (update.connection === 'open') {
      this.attempt = 0;
      this.lastQr = null;
      logger.info({ user: sock.user?.id }, 'whatsapp connected');
      this.setStatus({ state: 'CONNECTED', lastError: null, qr: null });
    } else if (update.connection === 'close') {
      const error = update.lastDisconnect?.error;
      const code = disconnectCode(error);
      this.dropSocket();
      void Promise.resolve(sock.end(undefined)).catch(() => undefined);
      if (code === LOGGED_OUT) void this.relink();
      else {
        const hint = code !== null && CLOSE_HINTS[code] ? ` — ${CLOSE_HINTS[code]}` : '';
        this.scheduleReconnect(`connection closed (${code ?? 'no status'}): ${error?.message ?? 'no reason given'}${hint}`, code);
      }
    }
  }

  private scheduleReconnect(reason: string, code: number | null): void {
    if (this.stopped) return;
    const { reconnectBaseMs = 1000, reconnectMaxMs = 60_000 } = this.options;
    const delay = code === RESTART_REQUIRED ? 0 : Math.min(reconnectBaseMs * 2 ** this.attempt++, reconnectMaxMs);
    this.options.logger.warn({ code, delayMs: delay }, `whatsapp ${reason}; reconnecting`);
    this.lastQr = null;
    const state: ChannelState = this.auth?.linked ? 'ERROR' : 'NEEDS_LINK';
    this.setStatus({ state, lastError: `${reason}; reconnecting in ${Math.round(delay / 1000)} s`, qr: null });
    this.reconnectTimer = setTimeout(() => void this.connect(), delay);
  }

  /** Logged out on the phone: forget the stale credentials and offer a new QR on a fresh socket. */
  private async relink(): Promise<void> {
    const run = this.run;
    this.options.logger.warn('whatsapp logged out; the stale link is removed, scan the new QR to link again');
    this.attempt = 0;
    this.lastQr = null;
    this.setStatus({ state: 'NEEDS_LINK', qr: null, lastError: 'logged out (401): link this server again with the new QR' });
    try {
      await this.saving;
      this.auth = null;
      await clearWhatsAppAuth(this.options.authDir);
    } catch (err) {
      this.options.logger.error({ err }, 'whatsapp auth folder could not be cleared');
    }
    if (!this.stopped && run === this.run && !this.reconnectTimer) this.reconnectTimer = setTimeout(() => void this.connect(), 0);
  }

  private printQr(qr: string): void {
    this.options.logger.info('whatsapp needs linking: scan the QR with WhatsApp → Linked devices → Link a device');
    const print = this.options.printQr ?? ((s: string) => process.stdout.write(`${s}\n`));
    qrcodeTerminal.generate(qr, { small: true }, (rendered) => print(rendered));
  }

  // === Inbound

  private async deliverInbound(sock: WhatsAppSocket, messages: WAMessage[]): Promise<void> {
    const { logger } = this.options;
    for (const raw of messages) {
      let message: InboundMessage | null = null;
      try {
        message = await this.toInbound(sock, raw);
      } catch (err) {
        logger.warn({ err, id: raw?.key?.id }, 'whatsapp message could not be mapped; skipped');
      }
      if (!message || !this.sink || this.stopped) continue;
      try {
        await this.sink(message);
      } catch (err) {
        logger.error({ err, chatId: message.chatId }, 'whatsapp inbound message failed');
      }
    }
  }

  private async toInbound(sock: WhatsAppSocket, raw: WAMessage): Promise<InboundMessage | null> {
    const { logger } = this.options;
    const download = this.options.downloadMedia ?? baileysDownloader(this.sdkLogger());
    const mapped = mapWhatsAppVoice(raw, selfIdentity(sock.user), sock, download) ?? mapWhatsAppDocument(raw, selfIdentity(sock.user), sock, download) ?? mapInbound(raw, selfIdentity(sock.user));
    if (mapped.kind === 'skip') {
      if (mapped.malformed) logger.warn({ id: raw?.key?.id, reason: mapped.reason }, 'malformed whatsapp message skipped');
      else logger.debug({ id: raw?.key?.id, reason: mapped.reason }, 'whatsapp message skipped');
      return null;
    }
    const { message, image } = mapped;
    if (!image) return message;
    const fetched = await fetchInboundImage(raw, sock, image, download, logger);
    if (fetched) message.images = [fetched];
    return message.text || fetched ? message : null;
  }
}

/** A message id of Baileys' own form (`3EB0` and 18 upper-case hex digits), the same for the same key. */
export function messageIdOf(idempotencyKey: string): string {
  return `3EB0${createHash('sha256').update(`muninn whatsapp ${idempotencyKey}`).digest('hex').slice(0, 18).toUpperCase()}`;
}

/** The WhatsApp transport as configured (`channels.whatsapp.*`, auth under `<data_dir>/whatsapp/auth`). */
export function whatsAppTransportFromConfig(
  config: AppConfig,
  deps: { logger: Logger; onStatus?: (transport: ChannelTransport) => void; makeSocket?: MakeWhatsAppSocket },
): WhatsAppTransport {
  return new WhatsAppTransport({
    makeSocket: deps.makeSocket,
    authDir: path.join(config.data_dir, 'whatsapp', 'auth'),
    perChatPerSecond: config.channels.whatsapp.per_chat_per_second,
    perMinute: config.channels.whatsapp.per_minute,
    logger: deps.logger.child({ channel: WHATSAPP_CHANNEL }),
    onStatus: deps.onStatus,
  });
}
