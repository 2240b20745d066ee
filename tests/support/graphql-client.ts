import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type DocumentNode } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export interface GqlError {
  message: string;
  path?: Array<string | number>;
  extensions?: { code?: string; [key: string]: unknown };
}

export interface GqlResult<T> {
  status: number;
  data?: T | null;
  errors?: GqlError[];
}

type Doc<T, V> = TypedDocumentNode<T, V> | DocumentNode | string;

function source(doc: Doc<unknown, unknown>): string {
  return typeof doc === 'string' ? doc : print(doc);
}

/** GraphQL over real HTTP (fetch) and real WebSocket (graphql-ws), with a bearer token. */
export class GraphQLTestClient {
  private ws: Client | null = null;

  constructor(
    readonly url: string,
    readonly token: string | null,
  ) {}

  async http<T, V>(doc: Doc<T, V>, variables?: V, extraHeaders: Record<string, string> = {}): Promise<GqlResult<T>> {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...extraHeaders };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    const res = await fetch(`${this.url}/graphql`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: source(doc as Doc<unknown, unknown>), variables }),
    });
    const body = (await res.json()) as { data?: T; errors?: GqlError[] };
    return { status: res.status, ...body };
  }

  /** Runs a query or mutation over the WebSocket transport and returns its single result. */
  async wsRun<T, V>(doc: Doc<T, V>, variables?: V): Promise<GqlResult<T>> {
    const client = this.wsClient();
    return new Promise((resolve, reject) => {
      let result: GqlResult<T> = { status: 0 };
      client.subscribe<T>(
        { query: source(doc as Doc<unknown, unknown>), variables: variables as Record<string, unknown> | undefined },
        {
          next: (value) => {
            result = { status: 0, data: value.data as T | null | undefined, errors: value.errors as GqlError[] | undefined };
          },
          error: (err) => {
            if (Array.isArray(err)) resolve({ status: 0, errors: err as GqlError[] });
            else reject(err instanceof Error ? err : new Error(JSON.stringify(err)));
          },
          complete: () => resolve(result),
        },
      );
    });
  }

  /** The underlying graphql-ws client (subscriptions). */
  wsClient(): Client {
    this.ws ??= createClient({
      url: this.url.replace(/^http/, 'ws') + '/graphql',
      webSocketImpl: WebSocket,
      connectionParams: this.token ? { authorization: `Bearer ${this.token}` } : {},
      retryAttempts: 0,
      lazy: true,
    });
    return this.ws;
  }

  async close(): Promise<void> {
    await this.ws?.dispose();
    this.ws = null;
  }
}

/** Throws with the GraphQL errors when a result has any; returns data otherwise. */
export function dataOf<T>(result: GqlResult<T>): T {
  if (result.errors?.length || !result.data) {
    throw new Error(`GraphQL errors: ${JSON.stringify(result.errors ?? result)}`);
  }
  return result.data;
}
