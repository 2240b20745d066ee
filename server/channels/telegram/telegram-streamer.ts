import { GrammyError } from 'grammy';
import type { Logger } from '../../common/logger';

/** The Bot API calls a live reply needs (the transport binds them to its bot). */
export interface LiveReplyApi {
  /** `sendMessageDraft`: an ephemeral preview in a private chat. */
  draft(chatId: string, draftId: number, text: string): Promise<void>;
  /** `sendMessage` as plain text; returns the message id. */
  send(chatId: string, text: string): Promise<number>;
  /** `editMessageText` as plain text. */
  edit(chatId: string, messageId: number, text: string): Promise<void>;
}

/** What a finished live reply left in the chat: a message to replace with the final text, or nothing. */
export interface LiveReplyResult {
  messageId: number | null;
}

interface Live {
  chatId: string;
  mode: 'draft' | 'edit';
  draftId: number;
  text: string;
  shown: string;
  messageId: number | null;
  timer: NodeJS.Timeout | null;
  inflight: Promise<void> | null;
  nextAt: number;
  finished: boolean;
  touchedAt: number;
}

const TELEGRAM_LIMIT = 4096;
/** Live replies nobody finished (a stopped turn) are forgotten after this long. */
const FORGET_AFTER_MS = 10 * 60_000;

/**
 * Streams a reply into a Telegram chat while the model writes it (`channels.telegram.stream: edit`):
 * in private chats as a message draft (`sendMessageDraft`, animated, ephemeral), in groups, or where
 * drafts are refused, as a message sent with the first text and edited as it grows. The first update
 * comes `intervalMs` after the first text (a reply finished sooner is only sent, once), later ones at
 * least `intervalMs` apart (three times that in groups, whose limit is 20 messages a minute), the newest
 * text wins, and a 429 pauses the chat for its `retry_after`. The final text is sent by the
 * outbound queue: it replaces the edited message (or follows the draft, which then disappears).
 */
export class TelegramStreamer {
  private readonly lives = new Map<string, Live>();
  private draftsRefused = false;

  constructor(
    private readonly api: () => LiveReplyApi | null,
    private readonly options: { intervalMs: number; logger: Logger; now?: () => number },
  ) {}

  update(chatId: string, key: string, textSoFar: string): void {
    const now = this.now();
    this.forgetStale(now);
    let live = this.lives.get(key);
    if (live?.finished) return;
    if (!live) {
      const privateChat = Number(chatId) > 0;
      // The first update waits one interval too: a reply ready by then goes out as one message, without a
      // live message (a send and an edit against the chat's limits) or a draft it does not need.
      live = { chatId, mode: privateChat && !this.draftsRefused ? 'draft' : 'edit', draftId: draftIdOf(key), text: '', shown: '', messageId: null, timer: null, inflight: null, nextAt: now + this.options.intervalMs, finished: false, touchedAt: now };
      this.lives.set(key, live);
    }
    live.text = visible(textSoFar);
    live.touchedAt = now;
    this.schedule(live);
  }

  /** Stops updating the live reply of `key` (after any update in flight) and says what it left. */
  async finish(key: string): Promise<LiveReplyResult> {
    const live = this.lives.get(key);
    if (!live) return { messageId: null };
    live.finished = true;
    if (live.timer) clearTimeout(live.timer);
    live.timer = null;
    await live.inflight;
    return { messageId: live.mode === 'edit' ? live.messageId : null };
  }

  /** The final text is in the chat: nothing more to remember of `key`. */
  forget(key: string): void {
    const live = this.lives.get(key);
    if (live?.timer) clearTimeout(live.timer);
    this.lives.delete(key);
  }

  clearAll(): void {
    for (const key of [...this.lives.keys()]) this.forget(key);
  }

  private schedule(live: Live): void {
    if (live.timer || live.inflight || live.finished || live.text === live.shown || !live.text.trim()) return;
    const delay = Math.max(0, live.nextAt - this.now());
    live.timer = setTimeout(() => this.flush(live), delay);
  }

  private flush(live: Live): void {
    live.timer = null;
    const api = this.api();
    if (!api || live.finished) return;
    const text = live.text;
    live.inflight = this.show(api, live, text)
      .then(() => {
        live.shown = text;
        live.nextAt = this.now() + this.spacing(live);
      })
      .catch((err: unknown) => this.failed(live, err))
      .finally(() => {
        live.inflight = null;
        this.schedule(live);
      });
  }

  private async show(api: LiveReplyApi, live: Live, text: string): Promise<void> {
    if (live.mode === 'draft') return api.draft(live.chatId, live.draftId, text);
    if (live.messageId === null) live.messageId = await api.send(live.chatId, text);
    else await api.edit(live.chatId, live.messageId, text);
  }

  private failed(live: Live, err: unknown): void {
    const retryAfter = err instanceof GrammyError ? err.parameters?.retry_after : undefined;
    if (retryAfter) {
      live.nextAt = this.now() + retryAfter * 1000;
      return;
    }
    if (live.mode === 'draft' && err instanceof GrammyError && err.error_code >= 400 && err.error_code < 500) {
      // This Bot API server has no drafts (or not for this chat): edit a message instead, from now on.
      this.draftsRefused = true;
      live.mode = 'edit';
      live.shown = '';
      this.options.logger.info({ chatId: live.chatId, error: err.description }, 'telegram: message drafts refused; streaming by edits');
      return;
    }
    if (err instanceof GrammyError && /message is not modified/i.test(err.description)) {
      live.shown = live.text;
      return;
    }
    live.nextAt = this.now() + this.spacing(live);
    this.options.logger.debug({ chatId: live.chatId, err: err instanceof Error ? err.message : String(err) }, 'telegram: live reply update failed');
  }

  private spacing(live: Live): number {
    return Number(live.chatId) > 0 ? this.options.intervalMs : this.options.intervalMs * 3;
  }

  private forgetStale(now: number): void {
    for (const [key, live] of this.lives) if (now - live.touchedAt > FORGET_AFTER_MS) this.forget(key);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/** What fits in one Telegram message; the rest shows when the final text is split. */
function visible(text: string): string {
  const trimmed = text.replace(/^\n+/, '');
  return trimmed.length <= TELEGRAM_LIMIT ? trimmed : `${trimmed.slice(0, TELEGRAM_LIMIT - 1)}…`;
}

/** A stable non-zero 31-bit id for the draft of `key` (edits of one draft are animated). */
function draftIdOf(key: string): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return (h & 0x7fffffff) || 1;
}
