import type { AppConfig } from '../config';
import type { Logger } from '../common/logger';
import type { SecretRedactor } from '../common/secret-redactor';
import type { ChannelTransport } from '../channels/channel.types';
import { ChatClient, SessionStreamTransport } from '../channels/web/session-stream-transport';
import { API_CHANNEL } from '../channels/api';

export interface ChannelTransportDeps {
  config: AppConfig;
  logger: Logger;
  redactor: SecretRedactor;
  /** Called by a transport whenever its status changes (channels query, channelStatus subscription). */
  onStatus: (transport: ChannelTransport) => void;
  /** The slash commands, for platforms with a command menu. */
  commands: () => ReadonlyArray<{ command: string; description: string }>;
}

/**
 * The transports of this config: the platforms it turns on (Telegram, WhatsApp; each adapter adds itself
 * here), then the web and TUI channels, whose clients use GraphQL and the session event stream. A
 * platform's adapter and SDK are loaded only when it is turned on (grammY alone is ≈ 15 MiB).
 */
export function createChannelTransports(deps: ChannelTransportDeps): ChannelTransport[] {
  const { config } = deps;
  const transports: ChannelTransport[] = [];
  if (config.channels.telegram.enabled) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { TelegramTransport } = require('../channels/telegram/telegram.adapter') as typeof import('../channels/telegram/telegram.adapter');
    transports.push(TelegramTransport.fromConfig(deps));
  }
  if (config.channels.whatsapp.enabled) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { whatsAppTransportFromConfig } = require('../channels/whatsapp') as typeof import('../channels/whatsapp');
    transports.push(whatsAppTransportFromConfig(config, deps));
  }
  for (const client of [ChatClient.WEB, ChatClient.TUI]) transports.push(new SessionStreamTransport(client, config.channels[client].enabled));
  // The OpenAI-compatible API reads replies from the session's event stream too.
  transports.push(new SessionStreamTransport(API_CHANNEL, config.channels.api.enabled));
  return transports;
}
