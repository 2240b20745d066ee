import { Ctx } from '../common/ctx';
import type { Logger } from '../common/logger';
import { SETUP_CHANNELS, type AppliedSetup, type ChannelSetupService, type SetupChannel } from '../modules/channel-setup';
import type { ChannelRegistry } from './channel-registry';
import type { ChannelTransport } from './channel.types';
import type { ChannelTransportSource } from './policies/channel-switch';

/** Settings a process runs a channel with: the config file's, or a stored set-up (its signature). */
const FROM_CONFIG = 'config';

export interface ChannelSetupSyncDeps {
  registry: ChannelRegistry;
  setups: Pick<ChannelSetupService, 'signatures' | 'read'>;
  /** The channel's transport for stored settings, or for the config file's when `stored` is null (null: none). */
  build(channel: SetupChannel, stored: AppliedSetup | null): ChannelTransport | null;
  logger: Logger;
}

/**
 * Keeps this process's Telegram and WhatsApp transports in step with their set-up from the console: at
 * every read of the channel switch, a channel whose stored settings changed (or were removed) gets a new
 * transport built from them (or from the config file), in place of the old one, which is stopped first.
 * One small query per read; settings are opened only when they changed.
 */
export class ChannelSetupSync implements ChannelTransportSource {
  /** What each channel's transport was built from; the startup transports come from the config file. */
  private readonly applied = new Map<SetupChannel, string>();
  private readonly ctx: Ctx;

  constructor(private readonly deps: ChannelSetupSyncDeps) {
    this.ctx = Ctx.system(deps.logger, 'channel set-up');
  }

  async refresh(): Promise<string[]> {
    const { setups, registry, logger } = this.deps;
    const signatures = await setups.signatures(this.ctx);
    const changed: string[] = [];
    for (const channel of SETUP_CHANNELS) {
      const want = signatures.get(channel) ?? FROM_CONFIG;
      if (want === (this.applied.get(channel) ?? FROM_CONFIG)) continue;
      this.applied.set(channel, want);
      let transport: ChannelTransport | null;
      try {
        const stored = want === FROM_CONFIG ? null : await setups.read(this.ctx, channel);
        transport = this.deps.build(channel, stored);
      } catch (err) {
        // E.g. the secret key changed: keep what runs, say why once (the next change is tried again).
        logger.error({ err, channel }, `the ${channel} settings from the console could not be applied`);
        continue;
      }
      logger.info({ channel, from: want === FROM_CONFIG ? 'config file' : 'console' }, `applying new ${channel} settings`);
      await registry.replace(channel, transport);
      changed.push(channel);
    }
    return changed;
  }
}
