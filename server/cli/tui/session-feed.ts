import type { Client } from 'graphql-ws';
import { parseChatEvent, SESSION_EVENTS_SUBSCRIPTION, type ChatEvent } from './chat-events';

export interface SessionFeedHandlers {
  /** Each event once, in `seq` order (replays after a reconnect are dropped). */
  event(event: ChatEvent): void;
  /** The subscription broke and is being re-established (`lost`), or works again (`restored`). */
  connection(state: 'lost' | 'restored', detail: string): void;
  /** The server refused the subscription (e.g. the session is gone or the token was revoked): no retry. */
  refused(message: string, code: string | null): void;
}

export interface SessionFeedOptions {
  /** Delay before the n-th reconnect attempt (1-based). @default 250 ms doubling up to 5 s */
  retryDelayMs?: (attempt: number) => number;
}

function defaultDelay(attempt: number): number {
  return Math.min(5000, 250 * 2 ** (attempt - 1));
}

function describeClose(err: unknown): string {
  const e = err as { code?: unknown; reason?: unknown; message?: unknown };
  if (typeof e?.code === 'number') return `socket closed (${e.code}${typeof e.reason === 'string' && e.reason ? ` ${e.reason}` : ''})`;
  if (typeof e?.message === 'string') return e.message;
  return 'connection lost';
}

/**
 * Follows one session's `sessionEvents` over graphql-ws and never loses an event of a running turn: when
 * the socket drops (or the server ends the subscription) it subscribes again with `afterSeq` = the last
 * `seq` it passed on, after a growing delay, and drops anything at or below that `seq`. GraphQL errors
 * (refusals) end the feed through `handlers.refused`.
 */
export class SessionFeed {
  private unsubscribe: (() => void) | null = null;
  private offConnected: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private attempt = 0;
  private lost = false;
  private lastSeq: number;

  constructor(
    private readonly client: Client,
    readonly sessionId: string,
    private readonly handlers: SessionFeedHandlers,
    private readonly options: SessionFeedOptions = {},
    afterSeq = 0,
  ) {
    this.lastSeq = afterSeq;
  }

  /** The highest `seq` passed on so far. */
  get seq(): number {
    return this.lastSeq;
  }

  start(): this {
    // A new socket was acknowledged: the resubscription is on its way.
    this.offConnected = this.client.on('connected', () => this.connected());
    this.subscribe();
    return this;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.offConnected?.();
    this.offConnected = null;
  }

  private subscribe(): void {
    if (this.stopped) return;
    let ended = false;
    const end = (why: unknown) => {
      if (ended || this.stopped) return;
      ended = true;
      this.unsubscribe = null;
      this.retry(why);
    };
    this.unsubscribe = this.client.subscribe(
      { query: SESSION_EVENTS_SUBSCRIPTION, variables: { sessionId: this.sessionId, afterSeq: this.lastSeq } },
      {
        next: (value) => {
          if (this.stopped) return;
          if (value.errors?.length) {
            const first = value.errors[0] as { message?: string; extensions?: { code?: unknown } };
            ended = true;
            this.stop();
            this.handlers.refused(first.message ?? 'subscription failed', typeof first.extensions?.code === 'string' ? first.extensions.code : null);
            return;
          }
          this.connected();
          const event = parseChatEvent((value.data as { sessionEvents?: unknown } | null | undefined)?.sessionEvents);
          if (!event || event.seq <= this.lastSeq) return;
          this.lastSeq = event.seq;
          this.handlers.event(event);
        },
        error: (err) => {
          if (Array.isArray(err)) {
            // GraphQL errors from the server (auth, not found): retrying would not help.
            const first = err[0] as { message?: string; extensions?: { code?: unknown } } | undefined;
            ended = true;
            this.stop();
            this.handlers.refused(first?.message ?? 'subscription refused', typeof first?.extensions?.code === 'string' ? first.extensions.code : null);
            return;
          }
          end(err);
        },
        // The server ended the stream (it is shutting down): follow it again once it is back.
        complete: () => end({ message: 'the server ended the subscription' }),
      },
    );
  }

  /** Called when a socket is acknowledged or the subscription delivers: the connection works (again). */
  private connected(): void {
    this.attempt = 0;
    if (this.lost) {
      this.lost = false;
      this.handlers.connection('restored', `following session ${this.sessionId} again from seq ${this.lastSeq}`);
    }
  }

  private retry(why: unknown): void {
    if (this.stopped) return;
    this.attempt += 1;
    if (!this.lost) {
      this.lost = true;
      this.handlers.connection('lost', describeClose(why));
    }
    const delay = (this.options.retryDelayMs ?? defaultDelay)(this.attempt);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.subscribe();
    }, delay);
  }
}
