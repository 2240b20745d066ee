import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from '../../common/redis-rate-limiter';
import type { Logger } from '../../common/logger';

/**
 * What a limiter says about one message: `ok` lets it on; `notify` refuses it and the sender should be
 * told (the first refusal of a window); `silent` refuses it without a word (later refusals).
 */
export type GuestVerdict = 'ok' | 'notify' | 'silent';

/** Port: counts GUEST messages. */
export interface GuestLimiter {
  /** Counts one message of `userId` and says whether it may be processed. */
  check(userId: string): Promise<GuestVerdict>;
}

export interface GuestRateLimiterOptions {
  /** Redis key prefix, unique per deployment and channel (e.g. `muninn:guest-rate:telegram`). */
  keyPrefix: string;
  /** Messages a GUEST may send per window. */
  points: number;
  /** Window length in seconds. @default 60 */
  durationSeconds?: number;
  logger: Logger;
}

/**
 * GUEST rate limit on Redis (`rate-limiter-flexible`), so it holds across API and worker processes: a
 * fixed window of `points` messages per `durationSeconds`. The first message over the limit in a window
 * gets `notify` (the policy answers with a polite notice), the rest `silent`, so a flood is not
 * answered with a flood of notices. When Redis fails the message is let through and a warning logged:
 * a broken limiter must not lock everyone out, and without Redis no turn would run anyway.
 */
export class GuestRateLimiter implements GuestLimiter {
  private readonly limiter: RateLimiterRedis;

  constructor(
    redis: Redis,
    private readonly options: GuestRateLimiterOptions,
  ) {
    if (!Number.isInteger(options.points) || options.points < 1) throw new Error('GuestRateLimiterOptions.points must be a positive integer');
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: options.keyPrefix,
      points: options.points,
      duration: options.durationSeconds ?? 60,
    });
  }

  /** Messages allowed per window. */
  get points(): number {
    return this.options.points;
  }

  async check(userId: string): Promise<GuestVerdict> {
    try {
      await this.limiter.consume(userId);
      return 'ok';
    } catch (err) {
      if (err instanceof RateLimiterRes) return err.consumedPoints === this.options.points + 1 ? 'notify' : 'silent';
      this.options.logger.warn({ err, userId }, 'GUEST rate limiter unavailable; letting the message through');
      return 'ok';
    }
  }
}
