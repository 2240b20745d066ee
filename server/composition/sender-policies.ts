import type { Redis } from 'ioredis';
import type { AppConfig } from '../config';
import type { Logger } from '../common/logger';
import type { Db } from '../persistence/db';
import type { SenderPolicy } from '../channels/inbound-pipeline';
import { ChannelSenderPolicy, type ChannelPolicyConfig } from '../channels/policies/channel-sender-policy';
import { GuestRateLimiter } from '../channels/policies/guest-rate-limiter';
import { RedisReplyThrottle } from '../channels/policies/reply-throttle';
import type { PairingService } from '../modules/pairing';
import type { UserService } from '../modules/users';

export interface SenderPolicyDeps {
  config: AppConfig;
  logger: Logger;
  db: Db;
  users: UserService;
  /** Shared Redis client for the GUEST rate limits and once-an-hour replies (any ready ioredis client). */
  redis: Redis;
  /** Pairing codes for unknown senders (the process's one PairingService). */
  pairing: PairingService;
}

/** Platform channels whose config carries the DM/group policy keys. */
const POLICY_CHANNELS = ['telegram', 'whatsapp'] as const satisfies ReadonlyArray<keyof AppConfig['channels']>;

/**
 * The unknown-sender policy of each platform channel (DESIGN §3: pairing, open, allowlist, disabled)
 * and the gating of known senders (GUEST rate limits, group allowlists), built from
 * `channels.<name>`. Web and TUI senders are always authenticated by token and need none; channels
 * without an entry refuse unknown senders.
 */
export function createSenderPolicies(deps: SenderPolicyDeps): Map<string, SenderPolicy> {
  const { config, redis } = deps;
  const prefix = config.redis.prefix;
  const { pairing } = deps;
  const throttle = new RedisReplyThrottle(redis, `${prefix}:reply-once`);
  const policies = new Map<string, SenderPolicy>();
  for (const channel of POLICY_CHANNELS) {
    const channelConfig: ChannelPolicyConfig = config.channels[channel];
    const logger = deps.logger.child({ module: 'sender-policy', channel });
    const guests = new GuestRateLimiter(redis, { keyPrefix: `${prefix}:guest-rate:${channel}`, points: channelConfig.guest_messages_per_minute, logger });
    policies.set(channel, new ChannelSenderPolicy(channel, channelConfig, { db: deps.db, users: deps.users, pairing, guests, throttle, logger }));
  }
  return policies;
}
