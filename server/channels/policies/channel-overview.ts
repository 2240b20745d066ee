import type { Ctx } from '../../common/ctx';
import { pushIterator } from '../../common/push-iterator';
import { TrustLevel } from '../../common/trust';
import { access } from '../../modules/users';
import type { ChannelRegistry } from '../channel-registry';
import type { ChannelState, ChannelStatus } from '../channel.types';
import type { ChannelSettings } from './channel-switch';
import { channelPluginName } from './channel-switch';

/** One channel as the admin sees it (`channels` query, `channelStatus` subscription). */
export interface ChannelInfo {
  name: string;
  /** Platform transports: the `channel:<name>` plugin setting (no row: on). Web and TUI: their config. */
  enabled: boolean;
  state: ChannelState;
  lastError: string | null;
  /** WhatsApp linking QR (text form) while the state is NEEDS_LINK. */
  qr: string | null;
  updatedAt: Date;
}

export interface ChannelOverviewDeps {
  registry: ChannelRegistry;
  settings: ChannelSettings;
}

/**
 * The status of every channel of this process for ADMINs: each registered platform transport (state,
 * last error, QR) plus the web and TUI channels, which are served by the GraphQL API itself (CONNECTED
 * while enabled in the config). Statuses come from the transports of this process: with
 * `--role api` and `--role worker` split, ask the process that runs the channels.
 */
export class ChannelOverview {
  constructor(private readonly deps: ChannelOverviewDeps) {}

  /** Every channel, platform transports first (ADMIN and above). */
  async list(ctx: Ctx): Promise<ChannelInfo[]> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'channel status');
    const out: ChannelInfo[] = [];
    for (const status of this.deps.registry.statuses()) out.push(await this.describe(ctx, status));
    return out;
  }

  /**
   * Status changes of the platform transports from now on (ADMIN and above, checked at once). The
   * iterator unsubscribes when the consumer stops (`return()`, e.g. the WebSocket closed); events that
   * arrive while the consumer is slow are buffered in order.
   */
  watch(ctx: Ctx): AsyncIterableIterator<ChannelInfo> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'channel status');
    const statuses = pushIterator<ChannelStatus>((push) => this.deps.registry.onStatus(push));
    const describe = (status: ChannelStatus) => this.describe(ctx, status);
    const iterator: AsyncIterableIterator<ChannelInfo> = {
      async next() {
        const item = await statuses.next();
        return item.done ? { done: true, value: undefined } : { done: false, value: await describe(item.value) };
      },
      async return() {
        await statuses.return?.();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }

  private async describe(ctx: Ctx, status: ChannelStatus): Promise<ChannelInfo> {
    return {
      name: status.channel,
      enabled: status.enabled ?? (await this.deps.settings.isEnabled(ctx, channelPluginName(status.channel), null, true)),
      state: status.state,
      lastError: status.lastError ?? null,
      qr: status.qr ?? null,
      updatedAt: status.updatedAt,
    };
  }
}
