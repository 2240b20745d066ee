import type { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import { NO_METRICS, type Metrics } from '../../common/metrics';
import type { OutboundRequest, OutboundSender } from '../../modules/agent';
import type { NoticeSender, NoticeTarget, SessionEventPublisher } from '../../modules/events';
import type { ChannelRegistry } from '../channel-registry';
import { ChannelOfflineError, PermanentDeliveryError, type OutboundVoice } from '../channel.types';
import { splitMessage } from '../message-splitter';
import type { DeliveryJobs, Mailbox } from './mailbox';

/** What serving a mailbox achieved; `retryAt` when it must be served again later (ms epoch). */
export type DrainResult = { sent: number; skipped: number; retryAt?: number };

const RETRY_BASE_MS = 1000;
const BUSY_RETRY_MS = 200;
/** How soon a message is tried again while its channel is offline (not counted as an attempt). */
const OFFLINE_RETRY_MS = 500;

/**
 * Delivery of replies and notices to chats (DESIGN §2.5). Channels whose clients read the session event
 * stream (web, TUI) get them right away from their transport. Platform chats each have a mailbox: a
 * message is split to the channel's limit when handed over and served oldest first by one worker at a
 * time, so a chat gets its messages in order while chats are served in parallel. Each chunk is marked
 * sent under its idempotency key, so a retried run never sends a chunk twice. A failed message stays
 * first and is retried with back-off; after `attempts` failures (or a permanent error) it is given up.
 * While the channel is offline (ChannelOfflineError) it waits without using up attempts.
 */
export class DeliveryService implements OutboundSender, NoticeSender {
  constructor(
    private readonly deps: { channels: ChannelRegistry; mailbox: Mailbox; jobs: DeliveryJobs; events: SessionEventPublisher; logger: Logger; metrics?: Metrics },
    private readonly options: { attempts: number },
  ) {}

  private get metrics(): Metrics {
    return this.deps.metrics ?? NO_METRICS;
  }

  deliver(ctx: Ctx, req: OutboundRequest): Promise<void> {
    return this.hand({ channel: req.channel, chatId: req.chatId, key: `reply:${req.messageId}`, sessionId: req.sessionId }, req.text, 'reply', req.turnId);
  }

  notify(ctx: Ctx, target: NoticeTarget, text: string): Promise<void> {
    return this.hand(target, text, 'notice');
  }

  /**
   * A notice of a session is published on its event stream (every subscriber sees it); a reply is there
   * already (MessageAdded). Platform chats also get the text through their mailbox.
   */
  private async hand(target: NoticeTarget, text: string, kind: 'reply' | 'notice', turnId?: string): Promise<void> {
    if (kind === 'notice' && target.sessionId) await this.deps.events.publish(target.sessionId, { type: 'Notice', level: target.level ?? 'info', text, ...(target.origin ? { origin: target.origin } : {}) });
    const transport = this.deps.channels.get(target.channel);
    if (!target.chatId || transport?.delivery === 'session-events') return;
    const limit = transport?.maxMessageLength ?? 4000;
    await this.deps.mailbox.add(chatOf(target.channel, target.chatId), { key: target.key, chunks: splitMessage(text, limit), ...(turnId ? { stream: turnId } : {}) });
    // Also when the key was already there: a drain job costs little and makes sure the mailbox is served.
    await this.deps.jobs.schedule(target.channel, target.chatId, target.key);
  }

  /**
   * Hands a spoken reply to its chat's mailbox (after any text of the same chat handed over before it).
   * Nothing happens for channels without voice messages; the caller checks `canSendVoice` first.
   */
  async deliverVoice(_ctx: Ctx, target: { channel: string; chatId: string; key: string }, voice: OutboundVoice): Promise<void> {
    await this.deps.mailbox.add(chatOf(target.channel, target.chatId), { key: target.key, chunks: [], voice });
    await this.deps.jobs.schedule(target.channel, target.chatId, target.key);
  }

  /** Whether the channel's transport sends voice messages. */
  canSendVoice(channel: string): boolean {
    return typeof this.deps.channels.get(channel)?.sendVoice === 'function';
  }

  /** Serves a chat's mailbox until it is empty, its first message waits for a retry, or the run is stopped. */
  async drain(_ctx: Ctx, channel: string, chatId: string, signal: AbortSignal): Promise<DrainResult> {
    const transport = this.deps.channels.get(channel);
    if (!transport || !this.deps.channels.isStarted(channel)) throw new Error(`channel ${channel} is not running in this worker`);
    const { mailbox } = this.deps;
    const chat = chatOf(channel, chatId);
    const lock = await mailbox.lock(chat);
    // Another job serves this chat; it also sends what this job was added for.
    if (!lock) return { sent: 0, skipped: 0, retryAt: Date.now() + BUSY_RETRY_MS };
    const result: DrainResult = { sent: 0, skipped: 0 };
    try {
      while (!lock.lost) {
        const item = await mailbox.head(chat);
        if (!item) break;
        // Independent reads, so their round trips overlap (this chat's lock keeps them current).
        const parts = item.voice ? 1 : item.chunks.length;
        const [backoff, sent] = await Promise.all([mailbox.backoffLeft(item.key), Promise.all(Array.from({ length: parts }, (_, i) => mailbox.isSent(item.key, i)))]);
        if (backoff > 0) return { ...result, retryAt: Date.now() + backoff };
        try {
          if (item.voice && !sent[0]) {
            if (!transport.sendVoice) throw new PermanentDeliveryError(`channel ${channel} cannot send voice messages`);
            await transport.sendVoice(chatId, item.voice, `${item.key}:0`, signal);
            await mailbox.markSent(item.key, 0);
            result.sent += 1;
            this.metrics.inc('muninn_deliveries_total', { channel });
          }
          for (let i = 0; i < item.chunks.length; i++) {
            if (sent[i]) {
              result.skipped += 1;
              continue;
            }
            const stream = item.stream ? { stream: { key: item.stream, first: i === 0 } } : {};
            await transport.send({ chatId, text: item.chunks[i]!, idempotencyKey: `${item.key}:${i}`, ...stream }, signal);
            await mailbox.markSent(item.key, i);
            result.sent += 1;
            this.metrics.inc('muninn_deliveries_total', { channel });
          }
        } catch (err) {
          if (signal.aborted) throw err;
          const retryIn = await this.failed(channel, item.key, err);
          if (retryIn !== null) return { ...result, retryAt: Date.now() + retryIn };
        }
        await mailbox.finishHead(chat, item.key);
      }
    } finally {
      await lock.release();
    }
    return result;
  }

  /** Records a failed send; returns the back-off before the next try, or null when the message is given up. */
  private async failed(channel: string, key: string, err: unknown): Promise<number | null> {
    if (err instanceof ChannelOfflineError) {
      this.deps.logger.debug({ channel, key, reason: err.message }, 'channel offline; delivery waits');
      return OFFLINE_RETRY_MS;
    }
    const failures = await this.deps.mailbox.countFailure(key);
    if (failures < this.options.attempts && !(err instanceof PermanentDeliveryError)) {
      // The message stays first in its chat's mailbox: later ones wait for it.
      const delay = RETRY_BASE_MS * 2 ** (failures - 1);
      await this.deps.mailbox.setBackoff(key, delay);
      this.deps.logger.warn({ err: (err as Error).message, channel, key, failures, retryInMs: delay }, 'delivery failed; retrying');
      this.metrics.inc('muninn_delivery_retries_total', { channel });
      return delay;
    }
    this.deps.logger.error({ err: (err as Error).message, channel, key, failures }, 'delivery given up');
    this.metrics.inc('muninn_deliveries_given_up_total', { channel });
    return null;
  }
}

function chatOf(channel: string, chatId: string): string {
  return `${channel}:${chatId}`;
}
