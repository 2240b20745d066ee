import type { Redis } from 'ioredis';
import type { SessionLock } from '../server/modules/summarizer';
import { RedisLock } from './redis-lock';

/**
 * The turn lock of a session (the one `turn.drain` jobs take) for work that must not overlap a turn,
 * such as a requested compaction. Turn jobs that find it held wait and try again.
 */
export class RedisSessionLock implements SessionLock {
  private readonly locks: RedisLock;

  constructor(
    redis: Redis,
    private readonly keyOf: (sessionId: string) => string,
    ttlMs: number,
  ) {
    this.locks = new RedisLock(redis, ttlMs);
  }

  async tryRun<T>(sessionId: string, fn: () => Promise<T>): Promise<{ value: T } | null> {
    const held = await this.locks.tryAcquire(this.keyOf(sessionId));
    if (!held) return null;
    try {
      return { value: await fn() };
    } finally {
      await held.release();
    }
  }
}
