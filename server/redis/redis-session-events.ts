import type { Redis } from 'ioredis';
import type { Logger } from '../common/logger';
import type { SessionEvent, SessionEventBody, SessionEventPublisher, SessionEventSource } from '../modules/events';
import { luaScript } from './lua-script';

export interface RedisSessionEventsOptions {
  /** Key prefix (config redis.prefix). */
  prefix: string;
  /** Events kept per session for reconnecting subscribers. @default 2000 */
  keep?: number;
  /** How long the kept events live after the last one. @default 86400 s */
  ttlSeconds?: number;
}

/**
 * One event in one round trip: takes the next seq (KEYS[1]), puts it first into the event's JSON (ARGV[1],
 * an object without `seq`), appends it to the capped log (KEYS[2], last ARGV[2] kept), renews both keys'
 * time-to-live (ARGV[3] s) and publishes it (KEYS[3]); returns the seq.
 */
const PUBLISH = `
local seq = redis.call('INCR', KEYS[1])
local json = '{"seq":' .. seq .. ',' .. string.sub(ARGV[1], 2)
redis.call('RPUSH', KEYS[2], json)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1)
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', KEYS[3], json)
return seq`;
const publishEvent = luaScript('publish_event', 3, PUBLISH);

/**
 * Session events on Redis, one script call each (`PUBLISH` above): `INCR` gives the per-session seq, a capped list keeps recent events so a
 * subscriber that reconnects with `afterSeq` gets what it missed, and pub/sub carries live events. One
 * subscriber connection serves every local subscription.
 */
export class RedisSessionEvents implements SessionEventPublisher, SessionEventSource {
  private readonly listeners = new Map<string, Set<(e: SessionEvent) => void>>();
  private readonly keep: number;
  private readonly ttl: number;

  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly logger: Logger,
    private readonly options: RedisSessionEventsOptions,
  ) {
    this.keep = options.keep ?? 2000;
    this.ttl = options.ttlSeconds ?? 86_400;
    this.sub.on('message', (channel: string, payload: string) => this.dispatch(channel, payload));
  }

  private key(kind: 'seq' | 'log' | 'ch', sessionId: string): string {
    return `${this.options.prefix}:events:${kind}:${sessionId}`;
  }

  async publish(sessionId: string, body: SessionEventBody): Promise<SessionEvent> {
    const fields = { ...body, sessionId, at: new Date().toISOString() };
    const seq = (await publishEvent(
      this.pub,
      [this.key('seq', sessionId), this.key('log', sessionId), this.key('ch', sessionId)],
      [JSON.stringify(fields), String(this.keep), String(this.ttl)],
    )) as number;
    return { ...fields, seq } as SessionEvent;
  }

  private dispatch(channel: string, payload: string): void {
    const set = this.listeners.get(channel);
    if (!set) return;
    let event: SessionEvent;
    try {
      event = JSON.parse(payload) as SessionEvent;
    } catch {
      this.logger.warn({ channel }, 'dropped a malformed session event');
      return;
    }
    for (const fn of set) fn(event);
  }

  private async listen(sessionId: string, fn: (e: SessionEvent) => void): Promise<() => Promise<void>> {
    const channel = this.key('ch', sessionId);
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      await this.sub.subscribe(channel);
    }
    set.add(fn);
    return async () => {
      set!.delete(fn);
      if (set!.size === 0 && this.listeners.get(channel) === set) {
        this.listeners.delete(channel);
        await this.sub.unsubscribe(channel).catch(() => undefined);
      }
    };
  }

  /** The seq of the session's latest event (0 when it has none): subscribing after it gets only what comes next. */
  async lastSeq(sessionId: string): Promise<number> {
    return Number((await this.pub.get(this.key('seq', sessionId))) ?? 0);
  }

  /** Events kept for a session with seq > afterSeq. */
  async backlog(sessionId: string, afterSeq: number): Promise<SessionEvent[]> {
    const rows = await this.pub.lrange(this.key('log', sessionId), 0, -1);
    return rows.map((r) => JSON.parse(r) as SessionEvent).filter((e) => e.seq > afterSeq);
  }

  subscribe(sessionId: string, afterSeq: number, signal?: AbortSignal): AsyncIterableIterator<SessionEvent> {
    const queue: SessionEvent[] = [];
    let wake: (() => void) | null = null;
    let done = false;
    let lastSeq = afterSeq;
    let unlisten: (() => Promise<void>) | null = null;
    let backlogLoaded = false;
    const pending: SessionEvent[] = [];
    const push = (e: SessionEvent) => {
      if (e.seq <= lastSeq) return;
      lastSeq = e.seq;
      queue.push(e);
      wake?.();
    };
    const onLive = (e: SessionEvent) => (backlogLoaded ? push(e) : pending.push(e));
    const ready = (async () => {
      // Listen first, then read the backlog, so nothing published in between is lost.
      unlisten = await this.listen(sessionId, onLive);
      for (const e of await this.backlog(sessionId, afterSeq)) push(e);
      backlogLoaded = true;
      for (const e of pending.sort((a, b) => a.seq - b.seq)) push(e);
    })();
    const finish = async () => {
      done = true;
      wake?.();
      await ready.catch(() => undefined);
      await unlisten?.();
    };
    signal?.addEventListener('abort', () => void finish(), { once: true });
    const iterator: AsyncIterableIterator<SessionEvent> = {
      [Symbol.asyncIterator]() {
        return iterator;
      },
      async next() {
        await ready;
        while (!done && queue.length === 0) await new Promise<void>((r) => (wake = r));
        wake = null;
        if (queue.length) return { value: queue.shift()!, done: false };
        return { value: undefined, done: true };
      },
      async return() {
        await finish();
        return { value: undefined, done: true };
      },
    };
    return iterator;
  }
}
