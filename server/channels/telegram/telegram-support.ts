import { timingSafeEqual } from 'node:crypto';
import type { ChannelState, ChannelStatus } from '../channel.types';

/**
 * The status of one channel: state and last error, with a callback on every change (the `channels`
 * query and the `channelStatus` subscription read it). Setting the same state and error again is no
 * change.
 */
export class ChannelStatusTracker {
  private current: ChannelStatus;

  constructor(
    channel: string,
    private readonly onChange: (status: ChannelStatus) => void,
  ) {
    this.current = { channel, state: 'STOPPED', lastError: null, updatedAt: new Date() };
  }

  get(): ChannelStatus {
    return { ...this.current };
  }

  get state(): ChannelState {
    return this.current.state;
  }

  /** Returns true when the status changed. A state other than ERROR keeps the last error for the record. */
  set(state: ChannelState, lastError?: string | null): boolean {
    const error = lastError === undefined ? this.current.lastError : lastError;
    if (state === this.current.state && error === this.current.lastError) return false;
    this.current = { ...this.current, state, lastError: error ?? null, updatedAt: new Date() };
    this.onChange(this.get());
    return true;
  }
}

/**
 * Keeps a "typing…" indicator alive per chat: platforms clear it after about 5 s, so it is sent again
 * every `refreshMs` until switched off, or until `maxMs` passed (a turn that never said "off").
 */
export class TypingRefresher {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly send: (chatId: string) => Promise<void>,
    private readonly refreshMs = 4000,
    private readonly maxMs = 10 * 60_000,
  ) {}

  async set(chatId: string, on: boolean): Promise<void> {
    this.clear(chatId);
    if (!on) return;
    const until = Date.now() + this.maxMs;
    const timer = setInterval(() => {
      if (Date.now() > until) this.clear(chatId);
      else void this.send(chatId);
    }, this.refreshMs);
    timer.unref();
    this.timers.set(chatId, timer);
    await this.send(chatId);
  }

  clearAll(): void {
    for (const chatId of [...this.timers.keys()]) this.clear(chatId);
  }

  private clear(chatId: string): void {
    const timer = this.timers.get(chatId);
    if (timer) clearInterval(timer);
    this.timers.delete(chatId);
  }
}

/** Waits `ms`, or less when `signal` aborts (then it resolves early; callers check the signal). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/** Constant-time comparison of a secret header with the expected value. */
export function secretMatches(given: string | string[] | undefined, expected: string): boolean {
  const a = Buffer.from(typeof given === 'string' ? given : '');
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
