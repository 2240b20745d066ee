import type { Redis } from 'ioredis';
import type { AudioStash } from '../modules/voice';

/**
 * Received voice notes between the inbound adapter and the transcription worker, as binary Redis strings
 * with a TTL (so a note nobody transcribes does not stay), under `<prefix>:voice:audio:<id>`.
 */
export class RedisAudioStash implements AudioStash {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(id: string): string {
    return `${this.prefix}:voice:audio:${id}`;
  }

  async put(id: string, audio: Buffer, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.key(id), audio, 'EX', ttlSeconds);
  }

  get(id: string): Promise<Buffer | null> {
    return this.redis.getBuffer(this.key(id));
  }

  async delete(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }
}
