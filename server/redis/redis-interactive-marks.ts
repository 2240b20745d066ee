import type { Redis } from 'ioredis';
import type { InteractiveMarks } from '../modules/models';

/** The time of each provider's last interactive call, shared by every process (expires after 2 × grace). */
export class RedisInteractiveMarks implements InteractiveMarks {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly graceMs: number,
  ) {}

  /** How long a mark lives. */
  get ttlMs(): number {
    return Math.max(this.graceMs * 2, 1000);
  }

  /** The key of a provider's mark (the direct model-call slots set it in the same script that takes a slot). */
  key(provider: string): string {
    return `${this.prefix}:model:last-interactive:${provider}`;
  }

  async last(provider: string): Promise<number> {
    return Number((await this.redis.get(this.key(provider))) ?? 0);
  }

  async mark(provider: string, at: number): Promise<void> {
    await this.redis.set(this.key(provider), String(at), 'PX', this.ttlMs);
  }
}
