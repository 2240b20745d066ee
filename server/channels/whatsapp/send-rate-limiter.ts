/** Options of {@link SendRateLimiter}. */
export interface SendRateLimiterOptions {
  /** Messages per second in one chat (fractions allowed: 0.5 = one every 2 s). @default 1 */
  perChatPerSecond?: number;
  /** Messages per rolling minute over all chats. @default 20 */
  perMinute?: number;
  /** Clock, for tests. @default Date.now */
  now?: () => number;
  /** Waits `ms` or rejects when `signal` aborts; for tests. @default a timer */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const WINDOW_MS = 60_000;

function timerSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Conservative outbound pacing for one WhatsApp socket (in memory: the socket lives in one process):
 * at most `perChatPerSecond` per chat (as a minimum spacing) and at most `perMinute` in any rolling
 * 60-second window overall. {@link acquire} waits for a free slot instead of failing, so a delivery
 * job simply takes longer. Hand-written rather than rate-limiter-flexible because its memory limiter
 * uses fixed windows, which allow twice the budget across a window boundary.
 */
export class SendRateLimiter {
  private readonly spacingMs: number;
  private readonly perMinute: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Send times within the last window, oldest first. */
  private readonly recent: number[] = [];
  private readonly lastPerChat = new Map<string, number>();

  constructor(options: SendRateLimiterOptions = {}) {
    const perChat = options.perChatPerSecond ?? 1;
    const perMinute = options.perMinute ?? 20;
    if (!(perChat > 0)) throw new Error(`perChatPerSecond must be > 0 (got ${perChat})`);
    if (!(perMinute >= 1)) throw new Error(`perMinute must be >= 1 (got ${perMinute})`);
    this.spacingMs = 1000 / perChat;
    this.perMinute = Math.floor(perMinute);
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? timerSleep;
  }

  /** How long a send to `chatId` would have to wait now (0 = may go). */
  waitMs(chatId: string): number {
    const now = this.now();
    while (this.recent.length && this.recent[0]! <= now - WINDOW_MS) this.recent.shift();
    const last = this.lastPerChat.get(chatId);
    const chatWait = last === undefined ? 0 : last + this.spacingMs - now;
    const windowWait = this.recent.length < this.perMinute ? 0 : this.recent[this.recent.length - this.perMinute]! + WINDOW_MS - now;
    return Math.max(0, chatWait, windowWait);
  }

  /**
   * Resolves when one message may be sent to `chatId` and counts it as sent. Checking and counting
   * happen in one synchronous step, so concurrent callers never overrun the limits. Rejects with the
   * signal's reason when `signal` aborts first.
   */
  async acquire(chatId: string, signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const wait = this.waitMs(chatId);
      if (wait <= 0) break;
      await this.sleep(Math.ceil(wait), signal);
    }
    const now = this.now();
    this.recent.push(now);
    this.lastPerChat.set(chatId, now);
    if (this.lastPerChat.size > 1000) this.forgetIdleChats(now);
  }

  /**
   * Marks the end of a send to `chatId` (WhatsApp took it): the spacing to the next one counts from here,
   * so a send that took a while to leave this process never lets the next follow it too closely.
   */
  sent(chatId: string): void {
    const now = this.now();
    if ((this.lastPerChat.get(chatId) ?? -Infinity) < now) this.lastPerChat.set(chatId, now);
  }

  private forgetIdleChats(now: number): void {
    for (const [chat, at] of this.lastPerChat) if (at + this.spacingMs <= now) this.lastPerChat.delete(chat);
  }
}
