import type { Redis } from 'ioredis';
import type { Logger } from '../common/logger';
import type { ProviderCallEntry, ProviderCallLog } from '../modules/models';

/** How many calls per provider are kept (the health view's window). */
const KEEP = 100;
/** A provider nobody called for a week starts from a clean slate. */
const TTL_SECONDS = 7 * 86_400;

/** The last calls of each provider in one capped Redis list per provider, shared by every process. */
export class RedisProviderCallLog implements ProviderCallLog {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {}

  private key(provider: string): string {
    return `${this.prefix}:model:calls:${provider}`;
  }

  async record(provider: string, entry: ProviderCallEntry): Promise<void> {
    const key = this.key(provider);
    try {
      await this.redis.multi().lpush(key, JSON.stringify(entry)).ltrim(key, 0, KEEP - 1).expire(key, TTL_SECONDS).exec();
    } catch (err) {
      // Only the health view loses a data point; the call itself went through.
      this.logger.debug({ err, provider }, 'could not record a model call for the health view');
    }
  }

  async recent(provider: string, limit: number): Promise<ProviderCallEntry[]> {
    const raw = await this.redis.lrange(this.key(provider), 0, Math.min(limit, KEEP) - 1);
    return raw.flatMap((line) => {
      try {
        return [JSON.parse(line) as ProviderCallEntry];
      } catch {
        return [];
      }
    });
  }
}
