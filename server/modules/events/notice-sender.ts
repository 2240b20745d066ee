import type { Ctx } from '../../common/ctx';

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
}

/**
 * Port: sends a one-off text (a notice, a command answer, a tool's message) to a chat and/or a session.
 * The delivery service next to the channels implements it.
 */
export interface NoticeSender {
  notify(ctx: Ctx, target: NoticeTarget, text: string): Promise<void>;
}
