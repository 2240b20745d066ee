import type { SessionEvent, SessionEventBody, SessionEventPublisher } from '../modules/events';
import type { ChannelRegistry } from './channel-registry';

/** Where a session's replies go: its channel and chat. */
export interface ReplyTarget {
  channel: string;
  chatId: string | null;
}

const MAX_TRACKED = 1000;
/** Text of turns that got no delta for this long is dropped (the turn ended long ago). */
const FORGET_AFTER_MS = 10 * 60_000;

/**
 * Publishes session events and hands the growing reply text of each turn to the session's channel
 * when that channel streams live replies (`ChannelTransport.liveReply`, e.g. Telegram with
 * `stream: edit`). Channels that read the session event stream (web, TUI) already get the deltas.
 */
export class LiveReplyRelay implements SessionEventPublisher {
  private readonly texts = new Map<string, { text: string; at: number }>();
  private readonly targets = new Map<string, Promise<ReplyTarget | null>>();

  constructor(
    private readonly inner: SessionEventPublisher,
    private readonly channels: ChannelRegistry,
    private readonly targetOf: (sessionId: string) => Promise<ReplyTarget | null>,
  ) {}

  async publish(sessionId: string, body: SessionEventBody): Promise<SessionEvent> {
    const event = await this.inner.publish(sessionId, body);
    if (body.type === 'ReplyDelta' && this.anyStreams()) await this.relay(sessionId, body.turnId, body.text);
    return event;
  }

  private anyStreams(): boolean {
    return this.channels.all().some((t) => typeof t.liveReply === 'function');
  }

  private async relay(sessionId: string, turnId: string, delta: string): Promise<void> {
    const target = await this.target(sessionId);
    if (!target?.chatId || !this.channels.isStarted(target.channel)) return;
    const transport = this.channels.get(target.channel);
    if (!transport?.liveReply) return;
    const now = Date.now();
    const entry = this.texts.get(turnId) ?? { text: '', at: now };
    entry.text += delta;
    entry.at = now;
    this.texts.set(turnId, entry);
    this.prune(now);
    transport.liveReply(target.chatId, turnId, entry.text);
  }

  private target(sessionId: string): Promise<ReplyTarget | null> {
    let found = this.targets.get(sessionId);
    if (!found) {
      found = this.targetOf(sessionId).catch(() => null);
      if (this.targets.size >= MAX_TRACKED) this.targets.delete(this.targets.keys().next().value!);
      this.targets.set(sessionId, found);
    }
    return found;
  }

  private prune(now: number): void {
    for (const [turnId, entry] of this.texts) {
      if (now - entry.at > FORGET_AFTER_MS || this.texts.size > MAX_TRACKED) this.texts.delete(turnId);
      else break;
    }
  }
}
