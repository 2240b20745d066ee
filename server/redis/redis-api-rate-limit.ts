import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from '../common/redis-rate-limiter';
import type { Logger } from '../common/logger';

/**
 * Requests per API token and minute at `/v1` (`rate-limiter-flexible`, keys `<prefix>:api-rate:<tokenId>`),
 * so the limit holds across API processes. When Redis fails the request is refused for a second: no turn
 * could be scheduled without Redis anyway.
 */
export class RedisApiRateLimit {
  private readonly limiter: RateLimiterRedis;

  constructor(
    redis: Redis,
    options: { prefix: string; perMinute: number },
    private readonly logger: Logger,
  ) {
    this.limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${options.prefix}:api-rate`, points: options.perMinute, duration: 60 });
  }

  /** Null when the request may go on, else the seconds to wait (for `Retry-After`). */
  async consume(tokenId: string): Promise<number | null> {
    try {
      await this.limiter.consume(tokenId);
      return null;
    } catch (err) {
      if (err instanceof RateLimiterRes) return Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      this.logger.warn({ err }, 'API rate limiter unavailable');
      return 1;
    }
  }
}
