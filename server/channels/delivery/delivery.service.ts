import { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import { NO_METRICS, type Metrics } from '../../common/metrics';
import type { OutboundRequest, OutboundSender } from '../../modules/agent';
import type { NoticeSender, NoticeTarget, SessionEventPublisher } from '../../modules/events';
import type { ChannelRegistry } from '../channel-registry';
import { ChannelOfflineError, PermanentDeliveryError, type ChannelTransport, type OutboundVoice } from '../channel.types';
import { splitMessage } from '../message-splitter';
import { LocalDrains, type DrainResult } from './local-drains';
import type { DeliveryJobs, MailChat, MailClaim, MailHead, Mailbox, MailItem } from './mailbox';

export type { DrainResult } from './local-drains';

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
 *
 * A mailbox is served by an `outbound.deliver` job in the process that holds the channel; with
 * `localDrains`, a process holding the channel serves it at once itself ({@link LocalDrains}) and the
 * job is only the fallback.
 */
export class DeliveryService implements OutboundSender, NoticeSender {
  constructor(
    private readonly deps: { channels: ChannelRegistry; mailbox: Mailbox; jobs: DeliveryJobs; events: SessionEventPublisher; logger: Logger; metrics?: Metrics },
    private readonly options: {
      attempts: number;
      /** Chats served at once in this process without the queue, when it holds their channel. @default 0 (always the queue) */
      localDrains?: number;
    },
  ) {
    this.local = options.localDrains ? new LocalDrains({ drain: (channel, chatId, signal, claimed) => this.drain(Ctx.system(deps.logger, 'delivery'), channel, chatId, signal, claimed), jobs: deps.jobs, logger: deps.logger }, options.localDrains) : null;
  }

  private readonly local: LocalDrains | null;

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
    await this.handOver({ channel: target.channel, chatId: target.chatId }, { key: target.key, chunks: splitMessage(text, limit), ...(turnId ? { stream: turnId } : {}) });
  }

  /**
   * Puts the item into its chat's mailbox and has the mailbox served: here at once when this process
   * holds the channel, else by a queue job. Also when the key was there already: serving costs little
   * and makes sure the mailbox is served.
   */
  private async handOver(chat: MailChat, item: MailItem): Promise<void> {
    const { mailbox } = this.deps;
    if (this.local && this.deps.channels.isStarted(chat.channel)) {
      const here = await this.local.handOver(chat.channel, chat.chatId, item.key, async (claim) => (claim ? (await mailbox.addAndClaim(chat, item)).claimed : (await mailbox.add(chat, item), null)));
      if (here) return;
    }
    await mailbox.add(chat, item);
    await this.deps.jobs.schedule(chat.channel, chat.chatId, item.key);
  }

  /** Has a chat whose messages are in its mailbox served: here when this process holds the channel, else by a queue job. */
  private async serve(channel: string, chatId: string, key: string): Promise<void> {
    if (this.local && this.deps.channels.isStarted(channel) && this.local.take(channel, chatId, key)) return;
    await this.deps.jobs.schedule(channel, chatId, key);
  }

  /**
   * Told when this process took a channel: the mailboxes of its chats that still hold something (their
   * holder died mid-drain) are served. Nothing to do without local drains: every message has its job.
   */
  async channelStarted(channel: string): Promise<void> {
    if (!this.local) return;
    const at = Date.now();
    for (const chatId of await this.deps.mailbox.waitingChats(channel)) await this.serve(channel, chatId, `sweep:${chatId}:${at}`);
  }

  /** Told before a channel stops here: its drains stop, and what they leave goes to the queue. */
  async channelStopping(channel: string): Promise<void> {
    await this.local?.leave(channel);
  }

  /** Stops the drains in this process (shutdown); the queue serves what they leave. */
  async close(): Promise<void> {
    await this.local?.close();
  }

  /**
   * Hands a spoken reply to its chat's mailbox (after any text of the same chat handed over before it).
   * Nothing happens for channels without voice messages; the caller checks `canSendVoice` first.
   */
  async deliverVoice(_ctx: Ctx, target: { channel: string; chatId: string; key: string }, voice: OutboundVoice): Promise<void> {
    await this.handOver({ channel: target.channel, chatId: target.chatId }, { key: target.key, chunks: [], voice });
  }

  /** Whether the channel's transport sends voice messages. */
  canSendVoice(channel: string): boolean {
    return typeof this.deps.channels.get(channel)?.sendVoice === 'function';
  }

  /** Serves a chat's mailbox until it is empty, its first message waits for a retry, or the run is stopped. */
  async drain(_ctx: Ctx, channel: string, chatId: string, signal: AbortSignal, taken?: MailClaim): Promise<DrainResult> {
    const transport = this.deps.channels.get(channel);
    if (!transport || !this.deps.channels.isStarted(channel)) {
      await taken?.lock.release();
      throw new Error(`channel ${channel} is not running in this worker`);
    }
    const { mailbox } = this.deps;
    const chat: MailChat = { channel, chatId };
    const claimed = taken ?? (await mailbox.claim(chat));
    // Another drain serves this chat; it also sends what this one was started for.
    if (!claimed) return { sent: 0, skipped: 0, retryAt: Date.now() + BUSY_RETRY_MS };
    const { lock } = claimed;
    const result: DrainResult = { sent: 0, skipped: 0 };
    try {
      for (let item = claimed.head; item && !lock.lost; ) {
        if (item.backoffMs > 0) return { ...result, retryAt: Date.now() + item.backoffMs };
        let last: number | undefined;
        try {
          last = await this.sendItem(transport, chat, item, result, signal);
        } catch (err) {
          if (signal.aborted) throw err;
          const retryIn = await this.failed(channel, item.key, err);
          if (retryIn !== null) return { ...result, retryAt: Date.now() + retryIn };
        }
        // The last part sent is marked together with taking the item off.
        item = await mailbox.finish(chat, item.key, last);
      }
    } finally {
      await lock.release();
    }
    return result;
  }

  /**
   * Sends the parts of `item` not sent yet, in order, marking each sent but the item's last one; returns
   * that last one's index when it was sent now (the caller marks it when taking the item off).
   */
  private async sendItem(transport: ChannelTransport, chat: MailChat, item: MailHead, result: DrainResult, signal: AbortSignal): Promise<number | undefined> {
    const { channel, chatId } = chat;
    const parts = item.voice ? 1 : item.chunks.length;
    const sent = async (i: number) => {
      result.sent += 1;
      this.metrics.inc('muninn_deliveries_total', { channel });
      if (i === parts - 1) return i;
      await this.deps.mailbox.markSent(item.key, i);
      return undefined;
    };
    if (item.voice) {
      if (item.sent[0]) return void (result.skipped += 1);
      if (!transport.sendVoice) throw new PermanentDeliveryError(`channel ${channel} cannot send voice messages`);
      await transport.sendVoice(chatId, item.voice, `${item.key}:0`, signal);
      return sent(0);
    }
    let last: number | undefined;
    for (let i = 0; i < item.chunks.length; i++) {
      if (item.sent[i]) {
        result.skipped += 1;
        continue;
      }
      const stream = item.stream ? { stream: { key: item.stream, first: i === 0 } } : {};
      await transport.send({ chatId, text: item.chunks[i]!, idempotencyKey: `${item.key}:${i}`, ...stream }, signal);
      last = await sent(i);
    }
    return last;
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
