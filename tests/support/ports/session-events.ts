import type { SessionEvent, SessionEventBody, SessionEventPublisher } from '../../../server/modules/events';

type Waiter = { match: (e: SessionEvent) => boolean; resolve: (e: SessionEvent) => void };

/**
 * Session events in process: numbered per session like the Redis stream, kept for assertions; `next(predicate)` awaits an event (one already published counts).
 */
export class InMemorySessionEvents implements SessionEventPublisher {
  readonly all: SessionEvent[] = [];
  private readonly seqs = new Map<string, number>();
  private waiters: Waiter[] = [];

  async publish(sessionId: string, body: SessionEventBody): Promise<SessionEvent> {
    const seq = (this.seqs.get(sessionId) ?? 0) + 1;
    this.seqs.set(sessionId, seq);
    const event = { ...body, seq, sessionId, at: new Date().toISOString() } as SessionEvent;
    this.all.push(event);
    const ready = this.waiters.filter((w) => w.match(event));
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve(event);
    return event;
  }

  /** Events of one session, optionally of one type. */
  of<T extends SessionEventBody['type']>(sessionId: string, type?: T): Array<Extract<SessionEvent, { type: T }>> {
    return this.all.filter((e) => e.sessionId === sessionId && (!type || e.type === type)) as Array<Extract<SessionEvent, { type: T }>>;
  }

  /** Resolves with the first event (published or still to come) that matches. */
  next(match: (e: SessionEvent) => boolean): Promise<SessionEvent> {
    const found = this.all.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
}
