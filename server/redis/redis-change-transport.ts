import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { CHANGE_TOPICS, type ChangeTopic, type ChangeTransport } from '../common/change-feed';
import type { Logger } from '../common/logger';

/**
 * Changes between processes over Redis pub/sub. Live only while subscribed: when the subscription is
 * lost, listeners are told that changes may have been missed, and again once it is back.
 */
export class RedisChangeTransport implements ChangeTransport {
  private readonly channel: string;
  private readonly origin = randomUUID();
  private subscribed = false;
  private listener: (topic: ChangeTopic | null) => void = () => undefined;

  constructor(
    private readonly publisher: Redis,
    /** A dedicated connection (subscriber mode). */
    private readonly subscriber: Redis,
    prefix: string,
    private readonly logger: Logger,
  ) {
    this.channel = `${prefix}:changes`;
  }

  get live(): boolean {
    return this.subscribed && this.subscriber.status === 'ready';
  }

  /** Subscribes; resolves once other processes' changes are heard. */
  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, payload: string) => {
      if (channel !== this.channel) return;
      const [origin, topic] = payload.split(' ');
      if (origin !== this.origin && CHANGE_TOPICS.includes(topic as ChangeTopic)) this.listener(topic as ChangeTopic);
    });
    const lost = () => {
      if (!this.subscribed) return;
      this.subscribed = false;
      this.listener(null);
    };
    this.subscriber.on('close', lost);
    this.subscriber.on('reconnecting', lost);
    this.subscriber.on('ready', () => {
      if (!this.subscribed) this.subscribe().catch((err: Error) => this.logger.warn({ err: err.message }, 'could not subscribe to changes'));
    });
    if (this.subscriber.status !== 'ready') await new Promise((resolve) => this.subscriber.once('ready', resolve));
    await this.subscribe();
  }

  publish(topic: ChangeTopic): void {
    this.publisher.publish(this.channel, `${this.origin} ${topic}`).catch((err: Error) => this.logger.warn({ err: err.message, topic }, 'could not announce a change'));
  }

  listen(fn: (topic: ChangeTopic | null) => void): void {
    this.listener = fn;
  }

  private async subscribe(): Promise<void> {
    await this.subscriber.subscribe(this.channel);
    // Changes announced while unsubscribed were missed: nothing kept from before is trusted.
    this.subscribed = true;
    this.listener(null);
  }
}
