import type { AppConfig } from '../config';
import type { Logger } from '../common/logger';
import type { SecretRedactor } from '../common/secret-redactor';
import type { ChannelTransport } from '../channels/channel.types';
import type { MakeWhatsAppSocket } from '../channels/whatsapp/whatsapp-sdk';
import { ChatClient, SessionStreamTransport } from '../channels/web/session-stream-transport';
import { API_CHANNEL } from '../channels/api';
import type { AppliedSetup, SetupChannel } from '../modules/channel-setup';

/** The outside services the platform transports talk to; tests pass fakes. */
export interface ChannelSdk {
  /** WhatsApp socket factory. @default Baileys' `makeWASocket` */
  whatsAppSocket?: MakeWhatsAppSocket;
}

export interface ChannelTransportDeps {
  config: AppConfig;
  logger: Logger;
  redactor: SecretRedactor;
  /** Called by a transport whenever its status changes (channels query, channelStatus subscription). */
  onStatus: (transport: ChannelTransport) => void;
  /** The slash commands, for platforms with a command menu. */
  commands: () => ReadonlyArray<{ command: string; description: string }>;
  sdk?: ChannelSdk;
}

/**
 * A platform channel's transport: from its set-up in the console when `stored` is given (that wins),
 * else from the config file when it turns the channel on, else null. A platform's adapter and SDK are
 * loaded only when it is used (grammY alone is ≈ 15 MiB).
 */
export function createPlatformTransport(deps: ChannelTransportDeps, channel: SetupChannel, stored: AppliedSetup | null): ChannelTransport | null {
  const { config } = deps;
  switch (channel) {
    case 'telegram': {
      const token = stored?.channel === 'telegram' ? (stored as AppliedSetup<'telegram'>).settings.botToken : null;
      if (!token && !config.channels.telegram.enabled) return null;
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { TelegramTransport } = require('../channels/telegram/telegram.adapter') as typeof import('../channels/telegram/telegram.adapter');
      deps.redactor.add(token);
      return TelegramTransport.fromConfig({ ...deps, token: token ?? undefined });
    }
    case 'whatsapp': {
      if (!stored && !config.channels.whatsapp.enabled) return null;
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { whatsAppTransportFromConfig } = require('../channels/whatsapp') as typeof import('../channels/whatsapp');
      return whatsAppTransportFromConfig(config, { ...deps, makeSocket: deps.sdk?.whatsAppSocket });
    }
    default:
      return null;
  }
}

/**
 * The transports of this config: the platforms it turns on (Telegram, WhatsApp; set-ups stored from the
 * console replace them once the channel switch reads them), then the web and TUI channels, whose clients
 * use GraphQL and the session event stream.
 */
export function createChannelTransports(deps: ChannelTransportDeps): ChannelTransport[] {
  const { config } = deps;
  const transports: ChannelTransport[] = [];
  for (const channel of ['telegram', 'whatsapp'] as const) {
    const transport = createPlatformTransport(deps, channel, null);
    if (transport) transports.push(transport);
  }
  for (const client of [ChatClient.WEB, ChatClient.TUI]) transports.push(new SessionStreamTransport(client, config.channels[client].enabled));
  // The OpenAI-compatible API reads replies from the session's event stream too.
  transports.push(new SessionStreamTransport(API_CHANNEL, config.channels.api.enabled));
  return transports;
}
