export { ChannelSetup } from './channel-setup.entity';
export { ChannelSetupService, type ChannelSetupDeps } from './channel-setup.service';
export {
  SETUP_CHANNELS,
  type AppliedSetup,
  type ChannelSettings,
  type ChannelSetupSource,
  type ChannelSetupSummary,
  type ConfiguredChannel,
  type SetupChannel,
  type SetupSealer,
  type TelegramTokenCheck,
} from './channel-setup.types';
