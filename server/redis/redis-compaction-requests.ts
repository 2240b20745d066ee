import type { Redis } from 'ioredis';
import type { CompactionRequest, CompactionRequests } from '../modules/summarizer';

const TTL_SECONDS = 86_400;

/** Compactions waiting for their session's turn, one per session (`<prefix>:compact:request:<id>`). */
export class RedisCompactionRequests implements CompactionRequests {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(sessionId: string): string {
    return `${this.prefix}:compact:request:${sessionId}`;
  }

  async put(sessionId: string, request: CompactionRequest): Promise<void> {
    await this.redis.set(this.key(sessionId), JSON.stringify(request), 'EX', TTL_SECONDS);
  }

  async take(sessionId: string): Promise<CompactionRequest | null> {
    const raw = await this.redis.getdel(this.key(sessionId));
    return raw ? (JSON.parse(raw) as CompactionRequest) : null;
  }
}
