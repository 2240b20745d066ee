import type { Redis } from 'ioredis';
import type { ExportTicket, ExportTickets } from '../modules/userdata';

/** Download tickets of user exports (`<prefix>:export:<id>`, JSON, expiring with the link). */
export class RedisExportTickets implements ExportTickets {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(exportId: string): string {
    return `${this.prefix}:export:${exportId}`;
  }

  async put(ticket: ExportTicket, ttlMs: number): Promise<void> {
    await this.redis.set(this.key(ticket.exportId), JSON.stringify(ticket), 'PX', Math.max(1, ttlMs));
  }

  async ready(exportId: string, file: string): Promise<boolean> {
    const ticket = await this.get(exportId);
    if (!ticket) return false;
    const ok = await this.redis.set(this.key(exportId), JSON.stringify({ ...ticket, file }), 'KEEPTTL', 'XX');
    return ok === 'OK';
  }

  async get(exportId: string): Promise<ExportTicket | null> {
    const raw = await this.redis.get(this.key(exportId));
    return raw ? (JSON.parse(raw) as ExportTicket) : null;
  }

  /** GETDEL makes the claim single: of two requests at once, one gets the ticket, the other nothing. */
  async claim(exportId: string, tokenHash: string): Promise<ExportTicket | null> {
    const raw = await this.redis.getdel(this.key(exportId));
    if (!raw) return null;
    const ticket = JSON.parse(raw) as ExportTicket;
    return ticket.tokenHash === tokenHash ? ticket : null;
  }

  async dropUser(userId: string): Promise<number> {
    let dropped = 0;
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${this.prefix}:export:*`, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        const raw = await this.redis.get(key);
        if (raw && (JSON.parse(raw) as ExportTicket).userId === userId) dropped += await this.redis.del(key);
      }
    } while (cursor !== '0');
    return dropped;
  }
}
