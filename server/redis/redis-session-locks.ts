import type { Redis } from 'ioredis';
import type { HeldSessionLock, SessionLocks } from '../modules/conversation';
import { RedisLock } from './redis-lock';
import type { ProcessLiveness } from './process-liveness';

/**
 * Session locks in Redis (`<prefix>:turn:lock:<sessionId>`), renewed while held, with a mark
 * (`<prefix>:turn:mark:<sessionId>`) for a message stored while the session was held.
 */
export class RedisSessionLocks implements SessionLocks {
  private readonly locks: RedisLock;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    ttlMs: number,
    liveness?: ProcessLiveness,
    /** The turns queue's keys of waiting jobs (a list, a sorted set), for `unlessQueued`. */
    private readonly queued: readonly string[] = [],
  ) {
    this.locks = new RedisLock(redis, ttlMs, liveness);
  }

  key(sessionId: string): string {
    return `${this.prefix}:turn:lock:${sessionId}`;
  }

  private markKey(sessionId: string): string {
    return `${this.prefix}:turn:mark:${sessionId}`;
  }

  tryAcquire(sessionId: string, options: { unlessQueued?: boolean } = {}): Promise<HeldSessionLock | null> {
    return this.locks.tryAcquire(this.key(sessionId), this.markKey(sessionId), options.unlessQueued ? this.queued : []);
  }

  markIfHeld(sessionId: string): Promise<boolean> {
    return this.locks.markIfHeld(this.key(sessionId), this.markKey(sessionId));
  }

  isHeld(sessionId: string): Promise<boolean> {
    return this.locks.isHeld(this.key(sessionId));
  }
}
