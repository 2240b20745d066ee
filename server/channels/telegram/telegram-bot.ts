import { autoRetry } from '@grammyjs/auto-retry';
import { Bot, GrammyError, type Transformer } from 'grammy';
import { SendThrottle, type SendThrottleRules } from './telegram-throttle';

/** What the transport learns from each getUpdates call, and whether the next one should be a short poll. */
export interface PollWatcher {
  /** True while not (yet) polling: the call then uses timeout 0, so a recovery shows at once. */
  probing(): boolean;
  succeeded(): void;
  failed(err: unknown, signal?: AbortSignal): void;
}

/** Methods that post into a chat, and so count against Telegram's per-chat and per-group limits. */
const SEND_METHODS = new Set(['sendMessage', 'editMessageText', 'sendPhoto', 'sendDocument', 'sendMediaGroup', 'sendVoice']);

/**
 * Per private chat: a burst of a few messages at once, then one per second on average (Telegram asks for
 * about one message per second in a chat and allows short bursts). Groups: 20 a minute, at least 1 s
 * apart; all chats together: 30 a second. A 429 still holds the chat's slot while auto-retry waits out
 * `retry_after`.
 */
export const PER_CHAT_BURST = 4;
const SEND_RULES: SendThrottleRules = {
  chat: { burst: PER_CHAT_BURST, everyMs: 1000, gapMs: 0 },
  group: { burst: 20, everyMs: 3000, gapMs: 1000 },
  global: { burst: 30, everyMs: 1000 / 30, gapMs: 0 },
};

/** grammY's Node build types signals with the `abort-controller` polyfill; at runtime Node's own work. */
export type ApiSignal = Parameters<Bot['api']['getMe']>[0];
export const apiSignal = (signal?: AbortSignal): ApiSignal => signal as unknown as ApiSignal;

/**
 * A grammY bot with the API transformers the transport relies on, installed inner to outer:
 * `@grammyjs/auto-retry` (waits out 429 `retry_after`, retries 5xx; network errors are rethrown so
 * the outbound queue and the poller decide), a {@link SendThrottle} on sends only (a burst of
 * PER_CHAT_BURST, then about 1 message/s per chat; 20/min per group, 30/s overall; a 429 wait holds the
 * chat's slot), and a watcher on getUpdates.
 */
export function createTelegramBot(token: string, apiRoot: string, watcher: PollWatcher): Bot {
  const bot = new Bot(token, { client: { apiRoot } });
  const throttle = new SendThrottle(SEND_RULES);
  bot.api.config.use(autoRetry({ maxRetryAttempts: 5, maxDelaySeconds: 300, rethrowHttpErrors: true }));
  bot.api.config.use(((prev, method, payload, signal) => {
    const chatId = SEND_METHODS.has(method) ? (payload as { chat_id?: unknown } | undefined)?.chat_id : undefined;
    if (chatId === undefined) return prev(method, payload, signal);
    return throttle.run(String(chatId), () => prev(method, payload, signal), signal as AbortSignal | undefined);
  }) as Transformer);
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
