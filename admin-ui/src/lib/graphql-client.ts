import { print } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { createClient, type Client } from 'graphql-ws';

/** A GraphQL error with its `extensions.code` (UNAUTHENTICATED, FORBIDDEN, BAD_USER_INPUT, …). */
export class GraphQLRequestError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

type Listener = () => void;
const unauthenticated = new Set<Listener>();
/** Called when the server says the token is no longer valid (the app signs out). */
export function onUnauthenticated(fn: Listener): () => void {
  unauthenticated.add(fn);
  return () => unauthenticated.delete(fn);
}

const printed = new WeakMap<object, string>();
function source(doc: TypedDocumentNode<unknown, never>): string {
  let s = printed.get(doc);
  if (!s) printed.set(doc, (s = print(doc)));
  return s;
}

/** Talks to /graphql: queries and mutations over HTTP (fetch), subscriptions over graphql-ws. */
export class GraphQLClient {
  private ws: Client | null = null;

  constructor(readonly token: string) {}

  async request<R, V>(doc: TypedDocumentNode<R, V>, variables?: V): Promise<R> {
    let res: Response;
    try {
      res = await fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
        body: JSON.stringify({ query: source(doc as TypedDocumentNode<unknown, never>), variables: variables ?? {} }),
      });
    } catch {
      throw new GraphQLRequestError('The server cannot be reached.', 'NETWORK');
    }
    let body: { data?: R; errors?: Array<{ message: string; extensions?: { code?: string } }> };
    try {
      body = await res.json();
    } catch {
      throw new GraphQLRequestError(`The server answered ${res.status} without GraphQL.`, 'NETWORK');
    }
    const err = body.errors?.[0];
    if (err) {
      const code = err.extensions?.code ?? 'INTERNAL_SERVER_ERROR';
      if (code === 'UNAUTHENTICATED') for (const fn of unauthenticated) fn();
      throw new GraphQLRequestError(err.message, code);
    }
    return body.data as R;
  }

  /**
   * Subscribes; `variables` may be changed in place while subscribed (graphql-ws re-sends the same payload
   * when it reconnects, so e.g. `afterSeq` moves forward and nothing is received twice).
   */
  subscribe<R, V>(doc: TypedDocumentNode<R, V>, variables: V, sink: { next(data: R): void; error?(e: GraphQLRequestError): void }): () => void {
    const client = this.socket();
    const payload = { query: source(doc as TypedDocumentNode<unknown, never>), variables: variables as Record<string, unknown> };
    return client.subscribe<R>(payload, {
      next: (r) => {
        if (r.errors?.length) sink.error?.(new GraphQLRequestError(r.errors[0]!.message, String(r.errors[0]!.extensions?.code ?? 'ERROR')));
        else if (r.data) sink.next(r.data as R);
      },
      error: (e) => {
        const list = Array.isArray(e) ? e : [];
        const first = list[0] as { message?: string; extensions?: { code?: string } } | undefined;
        sink.error?.(new GraphQLRequestError(first?.message ?? 'The live connection failed.', first?.extensions?.code ?? 'NETWORK'));
      },
      complete: () => undefined,
    });
  }

  private socket(): Client {
    if (!this.ws) {
      const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`;
      this.ws = createClient({
        url,
        connectionParams: { authorization: `Bearer ${this.token}` },
        retryAttempts: Infinity,
        shouldRetry: () => true,
        retryWait: async (n) => new Promise((r) => setTimeout(r, Math.min(5000, 300 * 2 ** n))),
      });
    }
    return this.ws;
  }

  close(): void {
    void this.ws?.dispose();
    this.ws = null;
  }
}
