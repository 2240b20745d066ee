import type { AppConfig } from '../config';
import type { Logger } from '../common/logger';
import type { SecretRedactor } from '../common/secret-redactor';
import type { ChannelTransport } from '../channels/channel.types';
import { TelegramTransport } from '../channels/telegram/telegram.adapter';
import { whatsAppTransportFromConfig } from '../channels/whatsapp';

export interface ChannelTransportDeps {
  config: AppConfig;
  logger: Logger;
  redactor: SecretRedactor;
  /** Called by a transport whenever its status changes (channels query, channelStatus subscription). */
  onStatus: (transport: ChannelTransport) => void;
}

/**
 * The platform transports this config turns on (Telegram, WhatsApp). Each adapter adds itself here;
 * the web and TUI channels need no transport (they use GraphQL).
 */
export function createChannelTransports(deps: ChannelTransportDeps): ChannelTransport[] {
  const { config } = deps;
  const transports: ChannelTransport[] = [];
  if (config.channels.telegram.enabled) transports.push(TelegramTransport.fromConfig(deps));
  if (config.channels.whatsapp.enabled) transports.push(whatsAppTransportFromConfig(config, deps));
  return transports;
}
