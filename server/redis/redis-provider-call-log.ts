import type { Redis } from 'ioredis';
import type { Logger } from '../common/logger';
import type { ProviderCallEntry, ProviderCallLog } from '../modules/models';
import { luaScript } from './lua-script';

/** How many calls per provider are kept (the health view's window). */
const KEEP = 100;
/** A provider nobody called for a week starts from a clean slate. */
const TTL_SECONDS = 7 * 86_400;

/** Pushes an entry (ARGV[1]) onto the capped list KEYS[1] (ARGV[2] kept) and renews its time-to-live (ARGV[3] s): one round trip. */
const RECORD = luaScript(
  'provider_call_record',
  1,
  `redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1`,
);

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
      await RECORD(this.redis, [key], [JSON.stringify(entry), KEEP, TTL_SECONDS]);
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
