import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { UserFacingSocketConfig, WAMessage } from '@whiskeysockets/baileys';
import type { MakeWhatsAppSocket, WhatsAppSocket } from '../../../server/channels/whatsapp/whatsapp-sdk';

export const BOT_PN = '4915100000001';
export const BOT_LID = '987654321012345';
/** DisconnectReason.connectionClosed: what Baileys throws for a send on a closed connection. */
const CONNECTION_CLOSED = 428;

/** A Baileys-close error as the real socket reports it (a Boom with `output.statusCode`). */
export function closeError(statusCode: number, message = 'Connection Failure'): Error {
  return Object.assign(new Error(message), { output: { statusCode } });
}

/**
 * A socket object with Baileys' event interface (`ev.on/off/emit`), recording what the adapter sends.
 * Tests drive it by emitting the same events `makeWASocket` emits.
 */
export class FakeWhatsAppSocket {
  readonly ev = new EventEmitter();
  /** Every message the server took, with its id (the sender's, or one the socket made up like Baileys). */
  readonly sent: Array<{ jid: string; text: string; at: number; id: string }> = [];
  readonly presence: Array<{ type: string; jid?: string }> = [];
  /** Every audio message (voice note when `ptt`) the server took. */
  readonly sentAudio: Array<{ jid: string; audio: Buffer; mimetype: string | null; ptt: boolean; seconds: number | null; at: number; id: string }> = [];
  user: WhatsAppSocket['user'] = { id: `${BOT_PN}:7@s.whatsapp.net`, lid: `${BOT_LID}:7@lid` };
  ended = false;

  constructor(readonly config: UserFacingSocketConfig) {}

  /** Failures for coming sends: each fails the first send it matches (by chat and text). */
  private readonly sendFaults: Array<{ when: (jid: string, text: string) => boolean; error: Error; drop?: 'before' | 'after' }> = [];

  /** The next send matching `when` (every send when omitted) throws `error`. */
  failNextSend(error: Error, when: (jid: string, text: string) => boolean = () => true): void {
    this.sendFaults.push({ when, error });
  }

  /**
   * The connection drops during the next send matching `when`: `before` the server took the message (it
   * is lost) or `after` (the server has it, the answer is lost). Either way the send fails with Baileys'
   * "Connection Closed" (428) and the socket closes, as a real one does.
   */
  dropDuringNextSend(moment: 'before' | 'after', when: (jid: string, text: string) => boolean = () => true): void {
    this.sendFaults.push({ when, error: closeError(CONNECTION_CLOSED, 'Connection Closed'), drop: moment });
  }

  async sendMessage(jid: string, content: { text?: string; audio?: Buffer; mimetype?: string; ptt?: boolean; seconds?: number }, options: { messageId?: string } = {}): Promise<WAMessage> {
    if (content.audio) {
      if (this.ended) throw closeError(CONNECTION_CLOSED, 'Connection Closed');
      const id = options.messageId ?? `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
      this.sentAudio.push({ jid, audio: content.audio, mimetype: content.mimetype ?? null, ptt: !!content.ptt, seconds: content.seconds ?? null, at: Date.now(), id });
      return { key: { id, remoteJid: jid, fromMe: true } } as WAMessage;
    }
    if (this.ended) throw closeError(CONNECTION_CLOSED, 'Connection Closed');
    const text = content.text ?? '';
    // Baileys makes up a random id when the sender gives none.
    const id = options.messageId ?? `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
    const index = this.sendFaults.findIndex((f) => f.when(jid, text));
    const fault = index >= 0 ? this.sendFaults.splice(index, 1)[0]! : null;
    if (fault?.drop === 'after') this.sent.push({ jid, text, at: Date.now(), id });
    if (fault?.drop) this.end(fault.error);
    if (fault) throw fault.error;
    this.sent.push({ jid, text, at: Date.now(), id });
    return { key: { id, remoteJid: jid, fromMe: true } } as WAMessage;
  }

  async sendPresenceUpdate(type: string, jid?: string): Promise<void> {
    this.presence.push({ type, jid });
  }

  /** Like Baileys: closing emits `connection.update` close once, then nothing. */
  end(error: Error | undefined): void {
    if (this.ended) return;
    this.ended = true;
    this.ev.emit('connection.update', { connection: 'close', lastDisconnect: { error, date: new Date() } });
  }

  /** A successful login: like Baileys, the credentials now name the account (`creds.me`), then `open`. */
  open(): void {
    const creds = this.config.auth?.creds;
    if (creds && this.user) {
      creds.me = { id: this.user.id, lid: this.user.lid };
      this.ev.emit('creds.update', { me: creds.me });
    }
    this.ev.emit('connection.update', { connection: 'open' });
  }

  qr(code: string): void {
    this.ev.emit('connection.update', { qr: code });
  }

  /** The server closed the connection with this status code. */
  close(statusCode: number, message?: string): void {
    this.end(closeError(statusCode, message));
  }

  upsert(messages: Array<Partial<WAMessage>>, type: 'notify' | 'append' = 'notify'): void {
    this.ev.emit('messages.upsert', { type, messages });
  }
}

/** A socket factory that hands out fake sockets and remembers them (and when each was made); `autoOpen` opens each at once. */
export function fakeSocketFactory(options: { autoOpen?: boolean } = {}): { make: MakeWhatsAppSocket; sockets: FakeWhatsAppSocket[]; madeAt: number[]; latest(): FakeWhatsAppSocket } {
  const sockets: FakeWhatsAppSocket[] = [];
  const madeAt: number[] = [];
  return {
    make: (config) => {
      const sock = new FakeWhatsAppSocket(config);
      sockets.push(sock);
      madeAt.push(Date.now());
      // A linked device reconnecting: the connection opens right after the socket is made.
      if (options.autoOpen) setImmediate(() => sock.ended || sock.open());
      return sock as unknown as WhatsAppSocket;
    },
    sockets,
    madeAt,
    latest: () => {
      const last = sockets[sockets.length - 1];
      if (!last) throw new Error('no socket made yet');
      return last;
    },
  };
}
