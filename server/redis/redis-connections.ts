import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../common/logger';
import { corkWritesPerTick } from './tick-corked-writes';

/** Hides the password of a redis:// URL for messages. */
export function safeRedisUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, '//***@');
}

/**
 * Creates and tracks every Redis client of the process, so they can all be awaited ready before the
 * HTTP server listens (a SUBSCRIBE sent before the ready check is lost) and closed together.
 */
/** ioredis states of a client whose connection is gone (until it is back, or for good). */
const LOST = new Set(['reconnecting', 'close', 'end']);

export class RedisConnections {
  private readonly clients: Array<{ name: string; client: Redis }> = [];

  constructor(
    readonly url: string,
    private readonly logger: Logger,
  ) {}

  create(name: string, options: RedisOptions = {}): Redis {
    const client = new Redis(this.url, {
      maxRetriesPerRequest: null,
      enableReadyCheck: true,
      connectionName: `muninn:${name}`,
      ...options,
    });
    let lastError = '';
    client.on('error', (err: Error) => {
      if (err.message !== lastError) this.logger.warn({ redis: name, err: err.message }, 'Redis connection error');
      lastError = err.message;
    });
    client.on('ready', () => {
      lastError = '';
    });
    corkWritesPerTick(client);
    this.clients.push({ name, client });
    return client;
  }

  /** Resolves when every client is ready; rejects with a clear message after `timeoutMs`. */
  async waitReady(timeoutMs = 10_000): Promise<void> {
    await Promise.all(
      this.clients.map(
        ({ name, client }) =>
          new Promise<void>((resolve, reject) => {
            if (client.status === 'ready') return resolve();
            const timer = setTimeout(
              () => reject(new Error(`Redis at ${safeRedisUrl(this.url)} is not reachable (client "${name}" not ready after ${timeoutMs} ms). Check REDIS_URL or start Redis.`)),
              timeoutMs,
            );
            client.once('ready', () => {
              clearTimeout(timer);
              resolve();
            });
          }),
      ),
    );
  }

  /**
   * Null when every client is connected, else why not. Commands of a disconnected client wait in its
   * offline queue until Redis is back, so callers that must answer now ask this first.
   */
  unavailable(): string | null {
    // A client still making its first connection is not an outage; one that lost its connection is.
    const down = this.clients.find(({ client }) => LOST.has(client.status));
    return down ? `Redis is not reachable (client "${down.name}" is ${down.client.status})` : null;
  }

  /**
   * Null when Redis answers a PING within `timeoutMs`, else why not. A client's status lags a connection
   * that has just died (the close event is not handled yet), so a caller about to store something that
   * must reach a queue asks Redis itself rather than only the client's status.
   */
  async unreachable(timeoutMs = 1000): Promise<string | null> {
    try {
      await this.ping(timeoutMs);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** PING through the first client; fails at once while disconnected and after `timeoutMs` otherwise. */
  async ping(timeoutMs = 2000): Promise<void> {
    const first = this.clients[0];
    if (!first) throw new Error('no Redis client');
    const down = this.unavailable();
    if (down) throw new Error(down);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        first.client.ping(),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`Redis did not answer PING within ${timeoutMs} ms`)), timeoutMs))),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await Promise.all(
      this.clients.splice(0).map(async ({ client }) => {
        try {
          await client.quit();
        } catch {
          client.disconnect();
        }
      }),
    );
  }
}
