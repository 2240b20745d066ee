import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { parseChatUser, parseSentTurn, type ChatUser, type SentTurn } from './chat-events';

/** The server answered with a GraphQL error; `code` is its `extensions.code` (e.g. UNAUTHENTICATED). */
export class ChatApiError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
    this.name = 'ChatApiError';
  }
}

/** No answer from the server at all (refused, DNS, timeout): nothing listens at the URL. */
export class ServerUnreachableError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`cannot reach ${url} (${reason})`);
    this.name = 'ServerUnreachableError';
  }
}

export interface ChatApiOptions {
  /** `http(s)://host:port[/prefix]`, without `/graphql`. */
  baseUrl: string;
  token: string;
  /** Per HTTP request. @default 30000 */
  timeoutMs?: number;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
}

const ME = /* GraphQL */ `query TuiMe { me { id displayName trust } }`;
const SEND_MESSAGE = /* GraphQL */ `
  mutation TuiSendMessage($input: SendMessageInput!) {
    sendMessage(input: $input) { sessionId messageId status duplicate reply }
  }
`;
const STOP_TURN = /* GraphQL */ `mutation TuiStopTurn($sessionId: ID!) { stopTurn(sessionId: $sessionId) }`;

/** Why a fetch failed, from undici's `cause` chain (e.g. "connect ECONNREFUSED 127.0.0.1:4000"). */
function networkReason(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string; errors?: Array<{ message?: string }> } };
  if (e?.name === 'TimeoutError') return 'timed out';
  const cause = e?.cause;
  if (cause?.errors?.length) return cause.errors.map((x) => x.message).join('; ');
  return cause?.message ?? cause?.code ?? e?.message ?? String(err);
}

/**
 * The GraphQL operations `muninn chat` uses: `me`, `sendMessage` (channel TUI) and `stopTurn` over HTTP
 * with `Authorization: Bearer`, and a graphql-ws client for `sessionEvents`. Network failures throw
 * ServerUnreachableError, GraphQL errors ChatApiError with the error's code.
 */
export class ChatApi {
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ChatApiOptions) {
    this.fetchImpl = options.fetch ?? fetch;
  }

  get graphqlUrl(): string {
    return `${this.options.baseUrl}/graphql`;
  }

  async me(): Promise<ChatUser> {
    return parseChatUser((await this.request(ME, {})).me);
  }

  async sendMessage(text: string): Promise<SentTurn> {
    return parseSentTurn((await this.request(SEND_MESSAGE, { input: { text, channel: 'TUI' } })).sendMessage);
  }

  /** True when a running turn was aborted. */
  async stopTurn(sessionId: string): Promise<boolean> {
    return (await this.request(STOP_TURN, { sessionId })).stopTurn === true;
  }

  /**
   * A graphql-ws client authenticated like the HTTP requests. It does not retry by itself (the session
   * feed reconnects with `afterSeq`) and pings every 10 s; a ping without pong for 5 s closes the socket,
   * so a half-open connection is noticed.
   */
  createSocketClient(): { client: Client; terminate(): void } {
    let socket: WebSocket | null = null;
    let pongTimer: NodeJS.Timeout | null = null;
    const clearPong = () => {
      if (pongTimer) clearTimeout(pongTimer);
      pongTimer = null;
    };
    const client = createClient({
      url: this.graphqlUrl.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${this.options.token}` },
      lazy: true,
      retryAttempts: 0,
      keepAlive: 10_000,
      on: {
        opened: (s) => {
          socket = s as WebSocket;
        },
        ping: (received) => {
          if (received) return;
          clearPong();
          pongTimer = setTimeout(() => {
            if (socket?.readyState === WebSocket.OPEN) socket.close(4408, 'Request Timeout');
          }, 5_000);
          pongTimer.unref();
        },
        pong: (received) => {
          if (received) clearPong();
        },
        closed: () => clearPong(),
      },
    });
    return {
      client,
      terminate: () => {
        clearPong();
        void client.dispose();
        // Do not wait for a close handshake a dead server will never answer.
        if (socket && socket.readyState !== WebSocket.CLOSED) socket.terminate();
      },
    };
  }

  private async request(query: string, variables: Record<string, unknown>): Promise<Record<string, unknown>> {
    let res: Response;
    try {
      res = await this.fetchImpl(this.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${this.options.token}` },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw new ServerUnreachableError(this.options.baseUrl, networkReason(err));
    }
    let body: { data?: Record<string, unknown> | null; errors?: Array<{ message?: string; extensions?: { code?: unknown } }> };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      throw new ChatApiError(`${this.graphqlUrl} answered HTTP ${res.status} without a GraphQL response; is this a Muninn server?`, null);
    }
    const first = body.errors?.[0];
    if (first) {
      const code = typeof first.extensions?.code === 'string' ? first.extensions.code : null;
      throw new ChatApiError(first.message ?? `HTTP ${res.status}`, code);
    }
    if (!body.data) throw new ChatApiError(`${this.graphqlUrl} answered HTTP ${res.status} without data`, null);
    return body.data;
  }
}
