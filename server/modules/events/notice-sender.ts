import type { Ctx } from '../../common/ctx';

/** What sent a notice on the server's own initiative (a beat's result), so a chat can say so. */
export interface NoticeOrigin {
  kind: 'beat';
  id: string;
  /** The beat's name as its owner gave it. */
  name: string;
}

/** Where a notice goes: a session's event stream and/or a chat, with an idempotency key. */
export interface NoticeTarget {
  channel: string;
  /** The chat to send it to; null when the notice only goes to the session's event stream. */
  chatId: string | null;
  /** A notice handed over twice with the same key is delivered once. */
  key: string;
  /** Publish it as a Notice event of this session too (every subscriber sees it). */
  sessionId?: string | null;
  level?: 'info' | 'warn' | 'error';
  /** What sent it (a beat), shown by the clients of the session's event stream. */
  origin?: NoticeOrigin | null;
}

/**
 * Port: sends a one-off text (a notice, a command answer, a tool's message) to a chat and/or a session.
 * The delivery service next to the channels implements it.
 */
export interface NoticeSender {
  notify(ctx: Ctx, target: NoticeTarget, text: string): Promise<void>;
}
