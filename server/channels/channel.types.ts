import type { InboundImage } from '../modules/conversation';
import type { InboundVoice } from '../modules/voice';
import type { InboundDocument } from '../modules/documents';

export type ChatKindName = 'dm' | 'group';

/** One platform event, as every adapter hands it to the inbound pipeline (DESIGN §2.1). */
export interface InboundMessage {
  channel: string;
  chatId: string;
  chatKind: ChatKindName;
  sender: { handle: string; displayName?: string | null };
  text: string;
  images?: InboundImage[];
  /** The bot was @-mentioned, or the message replies to one of the bot's messages. */
  mentionsBot?: boolean;
  /** Platform id of the message this one replies to. */
  replyTo?: string | null;
  /** Platform message id, for dedupe of redelivered events. */
  platformMessageId?: string | null;
  receivedAt?: Date;
  /** A voice note or audio file to transcribe (the text is then its caption, often empty). */
  voice?: InboundVoice;
  /** A file to add as a document (the text is then its caption, often empty). */
  document?: InboundDocument;
  /** The DM session key a channel names itself (web and TUI: `<channel>:<userId>`); platforms leave it out. */
  sessionKey?: string | null;
}

/** One chunk of a reply, ready for the platform (already split to its limit). */
export interface OutboundChunk {
  chatId: string;
  text: string;
  /** Stable per chunk (`<messageId>:<index>`): a retried delivery never sends a chunk twice. */
  idempotencyKey: string;
  replyTo?: string | null;
  /**
   * Set on the chunks of a reply whose text may have been streamed live (`liveReply`): `key` names the
   * turn, `first` marks the first chunk, which may replace the live message instead of sending anew.
   */
  stream?: { key: string; first: boolean };
}

/** A spoken reply: OGG/Opus audio (base64, so it travels in the JSON of the outbound mailbox). */
export interface OutboundVoice {
  dataBase64: string;
  mimeType: string;
  /** Play time, rounded up to whole seconds (shown by the platform). */
  seconds: number;
}

export type ChannelState = 'STOPPED' | 'STARTING' | 'CONNECTED' | 'POLLING' | 'WEBHOOK' | 'NEEDS_LINK' | 'ERROR';

export interface ChannelStatus {
  channel: string;
  state: ChannelState;
  lastError?: string | null;
  /** WhatsApp linking QR (text form) while state is NEEDS_LINK. */
  qr?: string | null;
  updatedAt: Date;
  /** Set by transports switched by the config rather than a `channel:<name>` plugin setting (web, TUI). */
  enabled?: boolean;
}

/** Where adapters send inbound messages. */
export type InboundSink = (message: InboundMessage) => Promise<void>;

/**
 * Port: a chat platform. Adapters (grammY, Baileys) map SDK events to InboundMessage and send
 * OutboundChunks; everything else (trust, sessions, turns) is shared.
 */
export interface ChannelTransport {
  readonly channel: string;
  /** Longest text one platform message may carry (Telegram 4096, WhatsApp 4000). */
  readonly maxMessageLength: number;
  /**
   * `queue` (default): replies and notices go through the chat's outbound mailbox and `send`.
   * `session-events`: the channel's clients read the session's event stream (web, TUI), where replies
   * already arrive as MessageAdded and notices as Notice events, so nothing is queued or sent.
   */
  readonly delivery?: 'queue' | 'session-events';
  start(sink: InboundSink): Promise<void>;
  stop(): Promise<void>;
  /** Sends one chunk; returns the platform id of the sent message. Throws on failure (the queue retries). */
  send(chunk: OutboundChunk, signal?: AbortSignal): Promise<{ platformMessageId?: string }>;
  /**
   * Shows the reply written so far (the whole text, growing) while the model writes; the transport
   * throttles to the platform's limits. The final text comes later through `send` with `stream` set.
   * Absent when the channel does not stream.
   */
  liveReply?(chatId: string, key: string, textSoFar: string): void;
  /**
   * Sends a spoken reply as the platform's voice message (Telegram sendVoice, a WhatsApp voice note);
   * throws like `send`. Absent when the channel has no voice messages.
   */
  sendVoice?(chatId: string, voice: OutboundVoice, idempotencyKey: string, signal?: AbortSignal): Promise<{ platformMessageId?: string }>;
  /** Shows or clears a typing / composing indicator. */
  setTyping?(chatId: string, on: boolean): Promise<void>;
  status(): ChannelStatus;
  /**
   * HTTP endpoint for platforms that push updates (Telegram webhook mode). Mounted by every API process
   * while the channel is on, wherever it runs: `sink` takes the updates in a process that does not hold
   * the channel. `path` should contain an unguessable secret, the same in every process.
   */
  webhook?(sink?: InboundSink): { path: string; handler: (req: import('node:http').IncomingMessage & { body?: unknown }, res: import('node:http').ServerResponse) => void } | null;
}

/**
 * Thrown by a transport's `send` when retrying cannot help (the user blocked the bot, the chat is gone):
 * the outbound queue gives the message up at once instead of retrying it.
 */
export class PermanentDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentDeliveryError';
  }
}

/**
 * Thrown by a transport's `send` when it is offline (reconnecting) and so sent nothing: the message waits
 * first in its chat's mailbox and is tried again shortly, without using up one of its attempts (a
 * reconnect would otherwise wear down every chat that had something to send meanwhile).
 */
export class ChannelOfflineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChannelOfflineError';
  }
}
