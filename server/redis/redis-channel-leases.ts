import type { Redis } from 'ioredis';
import type { ChannelLeases, HeldChannelLease } from '../channels/channel-leases';
import type { ProcessLiveness } from './process-liveness';
import { RedisLock } from './redis-lock';

/** Channel leases in Redis (`<prefix>:channel:lease:<channel>`): renewed while held, taken over from dead holders. */
export class RedisChannelLeases implements ChannelLeases {
  private readonly locks: RedisLock;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    leaseMs: number,
    liveness: ProcessLiveness,
  ) {
    this.locks = new RedisLock(redis, leaseMs, liveness);
  }

  key(channel: string): string {
    return `${this.prefix}:channel:lease:${channel}`;
  }

  tryAcquire(channel: string): Promise<HeldChannelLease | null> {
    return this.locks.tryAcquire(this.key(channel));
  }
}
