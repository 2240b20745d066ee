import type { ChannelStatus, ChannelTransport, OutboundChunk } from '../channel.types';

/** The clients that chat through GraphQL (`sendMessage` + `sessionEvents`): the web UI and `muninn chat`. */
export enum ChatClient {
  WEB = 'web',
  TUI = 'tui',
}

/**
 * The web and TUI channels as transports. Their clients send through GraphQL (`WebChannel`) and read
 * the session's event stream, where replies arrive as MessageAdded and notices as Notice events; so
 * delivery is `session-events` and nothing is ever queued for them. Switched by `channels.<name>.enabled`.
 */
export class SessionStreamTransport implements ChannelTransport {
  readonly delivery = 'session-events' as const;
  readonly maxMessageLength = Number.MAX_SAFE_INTEGER;
  private readonly since = new Date();

  constructor(
    /** `web`, `tui` or `api`. */
    readonly channel: ChatClient | string,
    private readonly enabled: boolean,
  ) {}

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  async send(_chunk: OutboundChunk): Promise<{ platformMessageId?: string }> {
    // Never called: the delivery service hands nothing to session-event channels.
    return {};
  }

  status(): ChannelStatus {
    return { channel: this.channel, state: this.enabled ? 'CONNECTED' : 'STOPPED', lastError: null, qr: null, updatedAt: this.since, enabled: this.enabled };
  }
}
