import type { Redis } from 'ioredis';
import type { Logger } from '../common/logger';
import type { BeatRunEvent, BeatRunFeed } from '../modules/beats';

const DATE_FIELDS = ['createdAt', 'updatedAt', 'finishedAt'] as const;

/**
 * Beat runs on Redis pub/sub, so a `beatRuns` subscriber on an API process sees the runs of every worker.
 * One subscriber connection serves every local subscription; live events only (the history is in
 * `beatRuns(beatId)`).
 */
export class RedisBeatRunFeed implements BeatRunFeed {
  private readonly listeners = new Set<(e: BeatRunEvent) => void>();
  private subscribed: Promise<unknown> | null = null;

  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly logger: Logger,
    private readonly prefix: string,
  ) {
    this.sub.on('message', (channel: string, payload: string) => {
      if (channel === this.channel) this.dispatch(payload);
    });
  }

  private get channel(): string {
    return `${this.prefix}:beat-runs`;
  }

  async publish(event: BeatRunEvent): Promise<void> {
    await this.pub.publish(this.channel, JSON.stringify(event));
  }

  private dispatch(payload: string): void {
    let event: BeatRunEvent;
    try {
      event = JSON.parse(payload) as BeatRunEvent;
      const run = event.run as unknown as Record<string, unknown>;
      for (const f of DATE_FIELDS) if (typeof run[f] === 'string') run[f] = new Date(run[f] as string);
    } catch {
      this.logger.warn('dropped a malformed beat run event');
      return;
    }
    for (const fn of this.listeners) fn(event);
  }

  subscribe(signal?: AbortSignal): AsyncIterableIterator<BeatRunEvent> {
    const queue: BeatRunEvent[] = [];
    let wake: (() => void) | null = null;
    let done = false;
    const fn = (e: BeatRunEvent) => {
      queue.push(e);
      wake?.();
    };
    this.listeners.add(fn);
    this.subscribed ??= this.sub.subscribe(this.channel);
    const ready = this.subscribed;
    const finish = () => {
      done = true;
      this.listeners.delete(fn);
      wake?.();
    };
    signal?.addEventListener('abort', finish, { once: true });
    const iterator: AsyncIterableIterator<BeatRunEvent> = {
      [Symbol.asyncIterator]: () => iterator,
      async next() {
        await ready;
        while (!done && queue.length === 0) await new Promise<void>((r) => (wake = r));
        wake = null;
        if (queue.length) return { value: queue.shift()!, done: false };
        return { value: undefined, done: true };
      },
      async return() {
        finish();
        return { value: undefined, done: true };
      },
    };
    return iterator;
  }
}

