/** A held channel lease; `lost` turns true when renewal found another holder (or none). */
export interface HeldChannelLease {
  readonly lost: boolean;
  release(): Promise<unknown>;
}

/**
 * Port: exactly one process of the cluster runs each platform channel (a Telegram bot's poller, a WhatsApp
 * account's socket). The holder renews its lease while it runs the channel; when it dies, another process
 * takes the lease over (at once when the holder's heartbeat is gone, at the latest after the lease time).
 * The Redis implementation lives in server/redis/.
 */
export interface ChannelLeases {
  tryAcquire(channel: string): Promise<HeldChannelLease | null>;
}
