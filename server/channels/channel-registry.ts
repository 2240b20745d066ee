import type { Logger } from '../common/logger';
import type { ChannelStatus, ChannelTransport, InboundSink } from './channel.types';

/**
 * The channel transports of this process (Telegram, WhatsApp, …), started and stopped together. The
 * outbound worker finds a chat's transport here.
 */
export class ChannelRegistry {
  private readonly transports = new Map<string, ChannelTransport>();
  private readonly started = new Set<string>();
  /** Platform channels whose plugin setting is on (as the channel switch last read it). */
  private readonly on = new Set<string>();
  private readonly listeners = new Set<(status: ChannelStatus) => void>();
  private readonly lifecycle = new Set<(channel: string, started: boolean) => void | Promise<void>>();

  constructor(private readonly logger: Logger) {}

  register(transport: ChannelTransport): void {
    this.transports.set(transport.channel, transport);
  }

  /**
   * Puts `transport` in place of the channel's current one, which is stopped first when it runs here (a
   * channel set up again from the console); null removes the channel from this process.
   */
  async replace(channel: string, transport: ChannelTransport | null): Promise<void> {
    await this.stop(channel);
    if (transport) this.transports.set(channel, transport);
    else this.transports.delete(channel);
    this.emitStatus(transport?.status() ?? { channel, state: 'STOPPED', lastError: null, qr: null, updatedAt: new Date() });
  }

  get(channel: string): ChannelTransport | null {
    return this.transports.get(channel) ?? null;
  }

  /** Every transport: platform channels first, then the session-event channels (web, TUI). */
  all(): ChannelTransport[] {
    const all = [...this.transports.values()];
    return [...all.filter((t) => t.delivery !== 'session-events'), ...all.filter((t) => t.delivery === 'session-events')];
  }

  statuses(): ChannelStatus[] {
    return this.all().map((t) => t.status());
  }

  /** Listeners are told whenever a channel's status changes (channelStatus subscription). */
  onStatus(fn: (status: ChannelStatus) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  emitStatus(status: ChannelStatus): void {
    for (const fn of this.listeners) fn(status);
  }

  /** Records whether the channel's setting is on (webhooks are served for channels that are on, wherever they run). */
  markOn(channel: string, on: boolean): void {
    if (on) this.on.add(channel);
    else this.on.delete(channel);
  }

  isOn(channel: string): boolean {
    return this.on.has(channel);
  }

  /** Told after a transport started here and before it stops (e.g. to serve its outbound queue). */
  onLifecycle(fn: (channel: string, started: boolean) => void | Promise<void>): () => void {
    this.lifecycle.add(fn);
    return () => this.lifecycle.delete(fn);
  }

  private async tell(channel: string, started: boolean): Promise<void> {
    for (const fn of this.lifecycle) {
      try {
        await fn(channel, started);
      } catch (err) {
        this.logger.error({ err, channel, started }, 'channel lifecycle listener failed');
      }
    }
  }

  async start(channel: string, sink: InboundSink): Promise<void> {
    const t = this.transports.get(channel);
    if (!t || this.started.has(channel)) return;
    this.started.add(channel);
    try {
      await t.start(sink);
      this.logger.info({ channel }, 'channel started');
    } catch (err) {
      this.started.delete(channel);
      this.logger.error({ err, channel }, 'channel failed to start');
    }
    if (this.started.has(channel)) await this.tell(channel, true);
    this.emitStatus(t.status());
  }

  async stop(channel: string): Promise<void> {
    const t = this.transports.get(channel);
    if (!t || !this.started.has(channel)) return;
    await this.tell(channel, false);
    this.started.delete(channel);
    await t.stop();
    this.emitStatus(t.status());
  }

  /** Shows or clears "typing…" in a chat; channels without the feature ignore it. */
  async setTyping(channel: string, chatId: string, on: boolean): Promise<void> {
    if (!this.started.has(channel)) return;
    await this.transports.get(channel)?.setTyping?.(chatId, on);
  }

  isStarted(channel: string): boolean {
    return this.started.has(channel);
  }

  async stopAll(): Promise<void> {
    for (const channel of [...this.started]) {
      try {
        await this.stop(channel);
      } catch (err) {
        this.logger.warn({ err, channel }, 'channel did not stop cleanly');
      }
    }
  }
}
