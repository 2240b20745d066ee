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
 * The events of one tick in one round trip: takes the next seqs (KEYS[1]), puts each first into its event's
 * JSON (ARGV[3..], objects without `seq`), appends them to the capped log (KEYS[2], last ARGV[1] kept),
 * renews both keys' time-to-live (ARGV[2] s) and publishes them (KEYS[3]) in one message: the event, or
 * a JSON array of them when there are several. Returns the first event's seq.
 */
const PUBLISH = `
local n = #ARGV - 2
local first = redis.call('INCRBY', KEYS[1], n) - n + 1
local out = {}
for i = 1, n do out[i] = '{"seq":' .. (first + i - 1) .. ',' .. string.sub(ARGV[i + 2], 2) end
redis.call('RPUSH', KEYS[2], unpack(out))
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[1]), -1)
redis.call('EXPIRE', KEYS[2], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[2])
if n == 1 then redis.call('PUBLISH', KEYS[3], out[1]) else redis.call('PUBLISH', KEYS[3], '[' .. table.concat(out, ',') .. ']') end
return first`;
const publishEvents = luaScript('publish_events', 3, PUBLISH);

/** Most events one script call takes (Lua's unpack has a limit; a tick rarely has more than a few). */
const MAX_BATCH = 200;

interface Queued {
  fields: Omit<SessionEvent, 'seq'>;
  resolve: (e: SessionEvent) => void;
  reject: (err: unknown) => void;
}

/**
 * Session events on Redis, one script call per session and tick (`PUBLISH` above: the events a turn
 * publishes together, such as its reply and its end, leave in one round trip; calls go out in order on one
 * connection, so a session's events keep their order): `INCRBY` gives the per-session seqs, a capped list
 * keeps recent events so a subscriber that reconnects with `afterSeq` gets what it missed, and pub/sub
 * carries live events. One subscriber connection serves every local subscription.
 */
export class RedisSessionEvents implements SessionEventPublisher, SessionEventSource {
  private readonly listeners = new Map<string, Set<(e: SessionEvent) => void>>();
  /** Events published in this tick, per session, not yet sent. */
  private readonly batches = new Map<string, Queued[]>();
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

  /** Resolves once the event is stored and published (with the events of the same tick). */
  publish(sessionId: string, body: SessionEventBody): Promise<SessionEvent> {
    const fields = { ...body, sessionId, at: new Date().toISOString() } as Omit<SessionEvent, 'seq'>;
    return new Promise((resolve, reject) => {
      let batch = this.batches.get(sessionId);
      if (!batch || batch.length >= MAX_BATCH) {
        batch = [];
        this.batches.set(sessionId, batch);
        const queued = batch;
        setImmediate(() => void this.flush(sessionId, queued));
      }
      batch.push({ fields, resolve, reject });
    });
  }

  private async flush(sessionId: string, batch: Queued[]): Promise<void> {
    if (this.batches.get(sessionId) === batch) this.batches.delete(sessionId);
    try {
      const first = (await publishEvents(
        this.pub,
        [this.key('seq', sessionId), this.key('log', sessionId), this.key('ch', sessionId)],
        [String(this.keep), String(this.ttl), ...batch.map((q) => JSON.stringify(q.fields))],
      )) as number;
      batch.forEach((q, i) => q.resolve({ ...q.fields, seq: first + i } as SessionEvent));
    } catch (err) {
      for (const q of batch) q.reject(err);
    }
  }

  private dispatch(channel: string, payload: string): void {
    const set = this.listeners.get(channel);
    if (!set) return;
    let events: SessionEvent[];
    try {
      const parsed = JSON.parse(payload) as SessionEvent | SessionEvent[];
      events = Array.isArray(parsed) ? parsed : [parsed];
    } catch {
      this.logger.warn({ channel }, 'dropped a malformed session event');
      return;
    }
    for (const event of events) for (const fn of set) fn(event);
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
