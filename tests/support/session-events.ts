import type { Client } from 'graphql-ws';

export const SESSION_EVENTS = /* GraphQL */ `
  subscription SessionEvents($sessionId: ID!, $afterSeq: Int) {
    sessionEvents(sessionId: $sessionId, afterSeq: $afterSeq) {
      __typename
      ... on TurnStarted { seq turnId messageIds }
      ... on ReplyDelta { seq turnId text }
      ... on ToolCallEvent { seq turnId callId tool phase outcome summary }
      ... on MessageAdded { seq messageId role content }
      ... on TurnFinished { seq turnId status replyMessageId error }
      ... on SessionRotated { seq previousSessionId newSessionId reason }
      ... on Notice { seq level text origin { kind id name } }
    }
  }
`;

export interface EventRecord {
  __typename: string;
  seq: number;
  [key: string]: unknown;
}

/** Collects a session's events over a real graphql-ws subscription until `until` says stop. */
export class EventCollector {
  readonly events: EventRecord[] = [];
  readonly errors: unknown[] = [];
  private unsubscribe: (() => void) | null = null;
  private waiters: Array<() => void> = [];

  constructor(client: Client, sessionId: string, afterSeq = 0) {
    this.unsubscribe = client.subscribe<{ sessionEvents: EventRecord }>(
      { query: SESSION_EVENTS, variables: { sessionId, afterSeq } },
      {
        next: (value) => {
          if (value.errors) this.errors.push(...value.errors);
          if (value.data?.sessionEvents) this.events.push(value.data.sessionEvents);
          for (const w of this.waiters.splice(0)) w();
        },
        error: (err) => {
          this.errors.push(err);
          for (const w of this.waiters.splice(0)) w();
        },
        complete: () => undefined,
      },
    );
  }

  /** Waits until `predicate` holds for the collected events (or fails after `timeoutMs`). */
  async waitFor(predicate: (events: EventRecord[]) => boolean, timeoutMs = 15_000): Promise<EventRecord[]> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.events)) {
      if (this.errors.length) throw new Error(`subscription error: ${this.errors.map(describeError).join('; ')}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; events so far: ${JSON.stringify(this.events.map((e) => e.__typename))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.events;
  }

  count(type: string): number {
    return this.events.filter((e) => e.__typename === type).length;
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }
}

/** A GraphQL error, an Error, or a socket's CloseEvent/ErrorEvent (whose fields JSON.stringify leaves out). */
function describeError(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { code?: unknown; reason?: unknown; message?: unknown; type?: unknown; extensions?: unknown };
    if (typeof e.code === 'number') return `socket closed ${e.code}${e.reason ? ` (${String(e.reason)})` : ''}`;
    if (e.message !== undefined) return JSON.stringify({ message: e.message, extensions: e.extensions });
    if (e.type !== undefined) return `socket ${String(e.type)}`;
  }
  return JSON.stringify(err);
}

