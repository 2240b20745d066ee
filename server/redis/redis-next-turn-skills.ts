import type { Redis } from 'ioredis';
import type { NextTurnSkills } from '../modules/skills';

const TTL_SECONDS = 86_400;

/** The skill `/skill <name>` asked for, per session, until its next turn takes it (`<prefix>:skill:next:<id>`). */
export class RedisNextTurnSkills implements NextTurnSkills {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(sessionId: string): string {
    return `${this.prefix}:skill:next:${sessionId}`;
  }

  async set(sessionId: string, name: string): Promise<void> {
    await this.redis.set(this.key(sessionId), name, 'EX', TTL_SECONDS);
  }

  take(sessionId: string): Promise<string | null> {
    return this.redis.getdel(this.key(sessionId));
  }
}
