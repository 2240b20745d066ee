import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { HttpClient } from './http-client';
import { now } from './stats';

const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { sessionId messageId status } }`;
const EVENTS = `subscription Ev($sessionId: ID!) { sessionEvents(sessionId: $sessionId) {
  __typename
  ... on TurnStarted { seq turnId messageIds }
  ... on ReplyDelta { seq turnId text }
  ... on TurnFinished { seq turnId status error }
} }`;

interface Ev {
  __typename: string;
  seq: number;
  turnId?: string;
  messageIds?: string[];
  text?: string;
  status?: string;
  error?: string | null;
}

interface Pending {
  messageId: string;
  turnId: string | null;
  sentAt: number;
  firstDeltaAt: number | null;
  resolve: (r: TurnTiming) => void;
  reject: (e: Error) => void;
}

export interface TurnTiming {
  totalMs: number;
  firstDeltaMs: number | null;
  /** When the first ReplyDelta arrived (`now()` clock), to set against when the model wrote it. */
  firstDeltaAt: number | null;
  /** When sendMessage was sent and when TurnFinished arrived (`now()` clock). */
  sentAt: number;
  finishedAt: number;
  status: string;
}

export function wsClient(url: string, token: string): Client {
  return createClient({
    url: url.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: true,
  });
}

/** One user's web session: sendMessage over HTTP, its events over graphql-ws; one turn at a time. */
export class ChatSession {
  sessionId = '';
  private ws: Client | null = null;
  private unsubscribe: (() => void) | null = null;
  private pending: Pending | null = null;
  /** TurnStarted (message id → turn id) and TurnFinished (turn id → status) seen before sendMessage answered. */
  private readonly early = new Map<string, string>();
  private readonly finishedEarly = new Map<string, { at: number; status: string; firstDeltaAt: number | null }>();
  private readonly deltaAt = new Map<string, number>();

  constructor(
    private readonly http: HttpClient,
    private readonly url: string,
    readonly token: string,
  ) {}

  /** Creates the session (a slash command answers at once) and subscribes to its events. */
  async open(): Promise<void> {
    const r = await this.http.gql<{ sendMessage: { sessionId: string } }>(SEND, { input: { text: '/whoami' } }, this.token);
    this.sessionId = r.sendMessage.sessionId;
    this.ws = wsClient(this.url, this.token);
    let acked!: () => void;
    const subscribed = new Promise<void>((resolve) => (acked = resolve));
    this.ws.on('connected', () => setTimeout(acked, 50));
    this.unsubscribe = this.ws.subscribe<{ sessionEvents: Ev }>(
      { query: EVENTS, variables: { sessionId: this.sessionId } },
      {
        next: (v) => v.data && this.onEvent(v.data.sessionEvents),
        error: (e) => this.pending?.reject(new Error(`subscription: ${JSON.stringify(e)}`)),
        complete: () => undefined,
      },
    );
    await subscribed;
  }

  private onEvent(ev: Ev): void {
    const p = this.pending;
    if (ev.__typename === 'TurnStarted') {
      if (p && ev.messageIds?.includes(p.messageId)) p.turnId = ev.turnId!;
      else for (const id of ev.messageIds ?? []) this.early.set(id, ev.turnId!);
      return;
    }
    if (!p || !p.turnId || ev.turnId !== p.turnId) {
      // A fast turn can finish before sendMessage answered with the message id.
      if (ev.__typename === 'ReplyDelta' && ev.turnId && !this.deltaAt.has(ev.turnId)) this.deltaAt.set(ev.turnId, now());
      if (ev.__typename === 'TurnFinished' && ev.turnId) this.finishedEarly.set(ev.turnId, { at: now(), status: ev.status!, firstDeltaAt: this.deltaAt.get(ev.turnId) ?? null });
      return;
    }
    if (ev.__typename === 'ReplyDelta' && p.firstDeltaAt === null) p.firstDeltaAt = now();
    if (ev.__typename === 'TurnFinished') {
      this.pending = null;
      const at = now();
      p.resolve({ totalMs: at - p.sentAt, firstDeltaMs: p.firstDeltaAt === null ? null : p.firstDeltaAt - p.sentAt, firstDeltaAt: p.firstDeltaAt, sentAt: p.sentAt, finishedAt: at, status: ev.status! });
    }
  }

  /** Sends `text` and resolves when its turn finished. */
  async turn(text: string, timeoutMs = 180_000): Promise<TurnTiming> {
    if (this.pending) throw new Error('one turn at a time');
    const sentAt = now();
    let resolve!: (r: TurnTiming) => void;
    let reject!: (e: Error) => void;
    const done = new Promise<TurnTiming>((res, rej) => ((resolve = res), (reject = rej)));
    const pending: Pending = { messageId: '', turnId: null, sentAt, firstDeltaAt: null, resolve, reject };
    this.pending = pending;
    const r = await this.http.gql<{ sendMessage: { messageId: string } }>(SEND, { input: { text, sessionId: this.sessionId } }, this.token);
    pending.messageId = r.sendMessage.messageId;
    pending.turnId = this.early.get(pending.messageId) ?? null;
    this.early.delete(pending.messageId);
    const finished = pending.turnId ? this.finishedEarly.get(pending.turnId) : undefined;
    if (finished) {
      this.pending = null;
      this.finishedEarly.clear();
      this.deltaAt.clear();
      return { totalMs: finished.at - sentAt, firstDeltaMs: finished.firstDeltaAt === null ? null : finished.firstDeltaAt - sentAt, firstDeltaAt: finished.firstDeltaAt, sentAt, finishedAt: finished.at, status: finished.status };
    }
    if (pending.turnId && this.deltaAt.has(pending.turnId)) pending.firstDeltaAt = this.deltaAt.get(pending.turnId)!;
    this.deltaAt.clear();
    const timer = setTimeout(() => reject(new Error(`turn timed out after ${timeoutMs} ms`)), timeoutMs);
    try {
      return await done;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    await this.ws?.dispose();
  }
}

/** Creates `count` MEMBER users with an API token each (as the owner). */
export async function createUsers(http: HttpClient, ownerToken: string, count: number, label = 'bench'): Promise<Array<{ id: string; token: string }>> {
  const out: Array<{ id: string; token: string }> = [];
  for (let i = 0; i < count; i++) {
    const u = await http.gql<{ createUser: { id: string } }>(`mutation($input: CreateUserInput!) { createUser(input: $input) { id } }`, { input: { displayName: `${label} ${i}` } }, ownerToken);
    const t = await http.gql<{ createApiToken: { token: string } }>(`mutation($n: String!, $u: ID!) { createApiToken(name: $n, userId: $u) { token } }`, { n: `${label}-${i}`, u: u.createUser.id }, ownerToken);
    out.push({ id: u.createUser.id, token: t.createApiToken.token });
  }
  return out;
}
