import { autoRetry } from '@grammyjs/auto-retry';
import { apiThrottler } from '@grammyjs/transformer-throttler';
import { Bot, GrammyError, type Transformer } from 'grammy';

/** What the transport learns from each getUpdates call, and whether the next one should be a short poll. */
export interface PollWatcher {
  /** True while not (yet) polling: the call then uses timeout 0, so a recovery shows at once. */
  probing(): boolean;
  succeeded(): void;
  failed(err: unknown, signal?: AbortSignal): void;
}

/** Methods that post into a chat, and so count against Telegram's per-chat and per-group limits. */
const SEND_METHODS = new Set(['sendMessage', 'editMessageText', 'sendPhoto', 'sendDocument', 'sendMediaGroup']);

/**
 * Per private chat: a burst of a few messages at once, then one per second on average (Telegram asks for
 * about one message per second in a chat and allows short bursts). A 429 still holds the chat's slot
 * while auto-retry waits out `retry_after`.
 */
export const PER_CHAT_BURST = 4;
const perChatThrottle = {
  maxConcurrent: 1,
  reservoir: PER_CHAT_BURST,
  reservoirIncreaseAmount: 1,
  reservoirIncreaseInterval: 1000,
  reservoirIncreaseMaximum: PER_CHAT_BURST,
};

/** grammY's Node build types signals with the `abort-controller` polyfill; at runtime Node's own work. */
export type ApiSignal = Parameters<Bot['api']['getMe']>[0];
export const apiSignal = (signal?: AbortSignal): ApiSignal => signal as unknown as ApiSignal;

/**
 * A grammY bot with the API transformers the transport relies on, installed inner to outer:
 * `@grammyjs/auto-retry` (waits out 429 `retry_after`, retries 5xx; network errors are rethrown so
 * the outbound queue and the poller decide), `@grammyjs/transformer-throttler` on sends only (a burst of
 * PER_CHAT_BURST, then about 1 message/s per chat; 20/min per group, 30/s overall; a 429 wait holds the chat's slot), and a
 * watcher on getUpdates.
 */
export function createTelegramBot(token: string, apiRoot: string, watcher: PollWatcher): Bot {
  const bot = new Bot(token, { client: { apiRoot } });
  const throttle = apiThrottler({ out: perChatThrottle });
  bot.api.config.use(autoRetry({ maxRetryAttempts: 5, maxDelaySeconds: 300, rethrowHttpErrors: true }));
  bot.api.config.use(((prev, method, payload, signal) => (SEND_METHODS.has(method) ? throttle(prev, method, payload, signal) : prev(method, payload, signal))) as Transformer);
  bot.api.config.use((async (prev, method, payload, signal) => {
    if (method !== 'getUpdates') return prev(method, payload, signal);
    try {
      const res = await prev(method, watcher.probing() ? { ...payload, timeout: 0 } : payload, signal);
      if (res.ok) watcher.succeeded();
      else watcher.failed(new GrammyError(`Call to '${method}' failed!`, res, method, {}));
      return res;
    } catch (err) {
      watcher.failed(err, signal as AbortSignal | undefined);
      throw err;
    }
  }) as Transformer);
  return bot;
}
