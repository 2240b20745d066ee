import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Redis } from 'ioredis';

/**
 * This process's heartbeat in Redis (`<prefix>:proc:<id>`, renewed every second, gone after a few
 * seconds without renewal). Locks carry their holder's id, so a fresh process can take over the locks of
 * a predecessor that died (SIGKILL, crash) as soon as its heartbeat is gone, instead of waiting for the
 * locks' time-to-live.
 */
export class ProcessLiveness {
  readonly id = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlMs = 4000,
  ) {}

  /** The heartbeat key of process `id` is this prefix followed by the id (for scripts that check it). */
  get keyPrefix(): string {
    return `${this.prefix}:proc:`;
  }

  private key(id: string): string {
    return `${this.keyPrefix}${id}`;
  }

  async start(): Promise<void> {
    const beat = () => this.redis.set(this.key(this.id), '1', 'PX', this.ttlMs);
    await beat();
    this.timer = setInterval(() => void beat().catch(() => undefined), Math.floor(this.ttlMs / 4));
    this.timer.unref();
  }

  async isAlive(id: string): Promise<boolean> {
    return id === this.id || (await this.redis.exists(this.key(id))) === 1;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.redis.del(this.key(this.id)).catch(() => undefined);
  }
}
