import type { NoticeOrigin } from './notice-sender';

/**
 * Events of one session, in `seq` order (DESIGN §7 `sessionEvents`). Plain data, so they can travel
 * through Redis; the GraphQL layer maps them onto the SessionEvent union.
 */
export type SessionEventBody =
  | { type: 'TurnStarted'; turnId: string; messageIds: string[] }
  | { type: 'ReplyDelta'; turnId: string; text: string }
  | { type: 'ToolCallEvent'; turnId: string; callId: string; tool: string; phase: 'started' | 'finished'; outcome?: string; summary?: string }
  | { type: 'MessageAdded'; messageId: string; role: string; content: string; voiceSeconds?: number | null }
  | { type: 'TurnFinished'; turnId: string; status: 'done' | 'failed' | 'cancelled'; replyMessageId?: string | null; error?: string | null; errorCode?: string | null }
  | { type: 'SessionRotated'; previousSessionId: string; newSessionId: string; reason: string }
  | { type: 'Notice'; level: 'info' | 'warn' | 'error'; text: string; origin?: NoticeOrigin | null };

export type SessionEvent = SessionEventBody & {
  /** Per-session sequence number, from 1; a reconnecting subscriber passes the last one it saw. */
  seq: number;
  sessionId: string;
  /** ISO time. */
  at: string;
};

/** Publishes events of a session (assigning `seq`) and keeps recent ones for reconnecting subscribers. */
export interface SessionEventPublisher {
  publish(sessionId: string, body: SessionEventBody): Promise<SessionEvent>;
}

/** Subscribes to a session's events: first those after `afterSeq` still kept, then live ones, no gaps. */
export interface SessionEventSource {
  subscribe(sessionId: string, afterSeq: number, signal?: AbortSignal): AsyncIterableIterator<SessionEvent>;
}
