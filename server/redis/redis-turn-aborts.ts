import type { Redis } from 'ioredis';
import type { Logger } from '../common/logger';
import type { AbortRequest, TurnAbortBus } from '../modules/conversation';

/** Abort requests over Redis pub/sub, so `/stop` reaches the worker process that runs the turn. */
export class RedisTurnAborts implements TurnAbortBus {
  private readonly channel: string;

  constructor(
    private readonly publisher: Redis,
    /** A dedicated connection (subscriber mode), made when a worker starts listening. */
    private readonly subscriber: () => Redis,
    prefix: string,
    private readonly logger: Logger,
  ) {
    this.channel = `${prefix}:turn-abort`;
  }

  async publish(req: AbortRequest): Promise<void> {
    await this.publisher.publish(this.channel, JSON.stringify(req));
  }

  async listen(fn: (req: AbortRequest) => void): Promise<() => Promise<void>> {
    const sub = this.subscriber();
    if (sub.status !== 'ready') await new Promise((resolve) => sub.once('ready', resolve));
    await sub.subscribe(this.channel);
    sub.on('message', (channel: string, payload: string) => {
      if (channel !== this.channel) return;
      try {
        fn(JSON.parse(payload) as AbortRequest);
      } catch {
        this.logger.warn('ignored a malformed turn-abort message');
      }
    });
    return async () => {
      await sub.unsubscribe(this.channel).catch(() => undefined);
    };
  }
}
