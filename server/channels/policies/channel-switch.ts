import { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import type { PluginSettingService } from '../../modules/plugins';
import type { ChannelLeases, HeldChannelLease } from '../channel-leases';
import type { ChannelRegistry } from '../channel-registry';
import type { InboundSink } from '../channel.types';

/** The plugin_settings name that switches a channel: `channel:telegram`, `channel:whatsapp`, … */
export function channelPluginName(channel: string): string {
  return `channel:${channel}`;
}

/** Where the switch reads whether a channel is on (PluginSettingService). */
export type ChannelSettings = Pick<PluginSettingService, 'isEnabled'>;

export interface ChannelSwitchOptions {
  /** How often plugin_settings is read for changes. @default 3000 */
  pollIntervalMs?: number;
}

export interface ChannelSwitchDeps {
  registry: ChannelRegistry;
  settings: ChannelSettings;
  /** Where started transports deliver inbound messages (the inbound pipeline). */
  sink: InboundSink;
  logger: Logger;
  /** One holder per channel in the cluster; without it this process runs every channel that is on. */
  leases?: ChannelLeases;
  /** Whether this process runs channels itself (else it only follows the settings, e.g. for webhooks). @default true */
  contend?: boolean;
  /** Rebuilds transports whose settings changed at run time (set up from the console). @default none */
  transports?: ChannelTransportSource;
}

/** Port: transports whose settings change while the server runs (ChannelSetupSync). */
export interface ChannelTransportSource {
  /** Replaces the transports whose settings changed in the registry; returns their channels. */
  refresh(): Promise<string[]>;
}

/**
 * Starts and stops the transports of this process as `plugin_settings` says: the global row of
 * `channel:<name>` (no row: on). `start()` starts every transport that is on, then polls the settings
 * and reacts to changes only (edge-triggered): a transport that failed to start is not restarted in a
 * loop, and one stopped by the switch stays stopped until the setting turns it on again.
 *
 * Polling rather than an in-process event: the setting is written by whichever process served the
 * GraphQL mutation (or by the CLI), while transports run in the worker processes, so a database read
 * is the one signal every process sees. One small indexed query per transport per interval.
 */
export class ChannelSwitch {
  private readonly options: Required<ChannelSwitchOptions>;
  private readonly desired = new Map<string, boolean>();
  private readonly leases = new Map<string, HeldChannelLease>();
  /** Channels whose start failed since their setting last changed: not retried in a loop. */
  private readonly failed = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private readonly ctx: Ctx;

  constructor(
    private readonly deps: ChannelSwitchDeps,
    options: ChannelSwitchOptions = {},
  ) {
    this.options = { pollIntervalMs: options.pollIntervalMs ?? 3000 };
    if (this.options.pollIntervalMs < 10) throw new Error('ChannelSwitchOptions.pollIntervalMs must be at least 10 ms');
    this.ctx = Ctx.system(deps.logger, 'channel switch');
  }

  /** Whether the settings turn `channel` on (no row: on). */
  isOn(ctx: Ctx, channel: string): Promise<boolean> {
    return this.deps.settings.isEnabled(ctx, channelPluginName(channel), null, true);
  }

  /** Starts the transports that are on and begins watching the settings. Idempotent. */
  async start(): Promise<void> {
    if (this.timer) return;
    this.timer = setInterval(() => void this.reconcile(), this.options.pollIntervalMs);
    this.timer.unref();
    await this.reconcile();
  }

  /**
   * Reads the settings once and starts or stops the transports whose setting changed since the last
   * read (on the first read: every transport). With leases, a channel that is on but held elsewhere is
   * tried again at every read, and one whose lease was lost is stopped. Runs are serialized; errors are
   * logged, never thrown.
   */
  reconcile(): Promise<void> {
    this.running = this.running.then(() => this.reconcileOnce());
    return this.running;
  }

  /** Stops watching; the channels this process holds are stopped, then their leases released. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    if (!this.deps.leases) return;
    for (const channel of [...this.leases.keys()]) {
      await this.deps.registry
        .stop(channel)
        .catch((err: unknown) => this.deps.logger.warn({ err, channel }, 'channel did not stop cleanly'));
      await this.release(channel);
    }
  }

  private async reconcileOnce(): Promise<void> {
    const { registry, logger } = this.deps;
    if (this.deps.transports) {
      try {
        for (const channel of await this.deps.transports.refresh()) {
          // A new transport: its setting is read afresh and a failed start is tried again.
          this.desired.delete(channel);
          this.failed.delete(channel);
          if (!registry.get(channel)) await this.release(channel);
        }
      } catch (err) {
        logger.warn({ err }, 'could not apply changed channel settings');
      }
    }
    // Session-event channels (web, TUI) are switched by the config and served by the API: nothing to start.
    for (const transport of registry.all().filter((t) => t.delivery !== 'session-events')) {
      const channel = transport.channel;
      try {
        const on = await this.isOn(this.ctx, channel);
        if (this.desired.get(channel) !== on) this.failed.delete(channel);
        this.desired.set(channel, on);
        registry.markOn(channel, on);
        if (!on) {
          if (registry.isStarted(channel)) {
            logger.info(
              { channel },
              `stopping channel ${channel} (plugin setting ${channelPluginName(channel)} is off)`,
            );
            await registry.stop(channel);
          }
          await this.release(channel);
          continue;
        }
        await this.keepRunning(channel);
      } catch (err) {
        // Forget the state so the next poll tries again.
        this.desired.delete(channel);
        logger.warn({ err, channel }, 'could not apply the channel setting');
      }
    }
  }

  /** A channel that is on: keep it running here if this process holds (or can take) its lease. */
  private async keepRunning(channel: string): Promise<void> {
    const { registry, sink, logger, leases } = this.deps;
    if (this.deps.contend === false) return;
    const held = this.leases.get(channel);
    if (registry.isStarted(channel)) {
      if (held?.lost) {
        logger.warn({ channel }, `lost the lease of channel ${channel}; another process runs it now`);
        this.leases.delete(channel);
        await registry.stop(channel);
      }
      return;
    }
    if (this.failed.has(channel)) return;
    if (leases && !held) {
      const lease = await leases.tryAcquire(channel);
      if (!lease) return; // another process runs it
      this.leases.set(channel, lease);
    }
    logger.info(
      { channel },
      `starting channel ${channel} (plugin setting ${channelPluginName(channel)} is on)`,
    );
    await registry.start(channel, sink);
    if (!registry.isStarted(channel)) {
      this.failed.add(channel);
      await this.release(channel);
    }
  }

  private async release(channel: string): Promise<void> {
    const lease = this.leases.get(channel);
    this.leases.delete(channel);
    await lease?.release().catch(() => undefined);
  }
}
