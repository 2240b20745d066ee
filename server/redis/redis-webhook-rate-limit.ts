import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from '../common/redis-rate-limiter';
import type { Logger } from '../common/logger';
import type { WebhookRateLimit } from '../modules/webhooks';

/**
 * Calls per hook and minute on Redis (`rate-limiter-flexible`, keys `<prefix>:hook-rate:<name>`), so the
 * limit holds across API processes. When Redis fails the call is refused for a second: no turn could
 * be scheduled without Redis anyway.
 */
export class RedisWebhookRateLimit implements WebhookRateLimit {
  private readonly limiter: RateLimiterRedis;

  constructor(
    redis: Redis,
    options: { prefix: string; perMinute: number },
    private readonly logger: Logger,
  ) {
    this.limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${options.prefix}:hook-rate`, points: options.perMinute, duration: 60 });
  }

  async consume(hookName: string): Promise<number | null> {
    try {
      await this.limiter.consume(hookName);
      return null;
    } catch (err) {
      if (err instanceof RateLimiterRes) return Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      this.logger.warn({ err, webhook: hookName }, 'webhook rate limiter unavailable');
      return 1;
    }
  }
}
