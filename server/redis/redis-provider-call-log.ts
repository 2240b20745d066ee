import type { Redis } from 'ioredis';
import type { Logger } from '../common/logger';
import type { ProviderCallEntry, ProviderCallLog } from '../modules/models';
import { luaScript } from './lua-script';

/** How many calls per provider are kept (the health view's window). */
const KEEP = 100;
/** A provider nobody called for a week starts from a clean slate. */
const TTL_SECONDS = 7 * 86_400;

/**
 * Pushes entries (ARGV[3..], oldest first) onto the capped list KEYS[1] (ARGV[1] kept, newest first) and
 * renews its time-to-live (ARGV[2] s): one round trip.
 */
const RECORD = luaScript(
  'provider_calls_record',
  1,
  `redis.call('LPUSH', KEYS[1], unpack(ARGV, 3))
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[1]) - 1)
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1`,
);

/**
 * The last calls of each provider in one capped Redis list per provider, shared by every process. A
 * process writes the calls it ran at most once per `flushMs` (one round trip for all of them, not one
 * per call); its own `recent` sees them at once, other processes' after that delay.
 */
export class RedisProviderCallLog implements ProviderCallLog {
  private readonly waiting = new Map<string, string[]>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly logger: Logger,
    private readonly flushMs = 1000,
  ) {}

  private key(provider: string): string {
    return `${this.prefix}:model:calls:${provider}`;
  }

  async record(provider: string, entry: ProviderCallEntry): Promise<void> {
    const list = this.waiting.get(provider) ?? [];
    list.push(JSON.stringify(entry));
    if (list.length > KEEP) list.shift();
    this.waiting.set(provider, list);
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Writes the calls recorded here and not written yet. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batches = [...this.waiting];
    this.waiting.clear();
    await Promise.all(
      batches.map(async ([provider, entries]) => {
        try {
          await RECORD(this.redis, [this.key(provider)], [KEEP, TTL_SECONDS, ...entries]);
        } catch (err) {
          // Only the health view loses data points; the calls themselves went through.
          this.logger.debug({ err, provider }, 'could not record model calls for the health view');
        }
      }),
    );
  }

  async recent(provider: string, limit: number): Promise<ProviderCallEntry[]> {
    if (this.waiting.has(provider)) await this.flush();
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
