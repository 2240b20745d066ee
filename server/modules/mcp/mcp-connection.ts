import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerDefinition } from '../../config';
import type { Logger } from '../../common/logger';
import { Semaphore } from './semaphore';
import { mcpClientSdk } from './mcp-sdk';

/** Where a connection stands, as `mcpServers` shows it. */
export type McpConnectionState = 'idle' | 'connecting' | 'ready' | 'failed' | 'closed';

export interface McpConnectionOptions {
  name: string;
  definition: McpServerDefinition;
  /** Headers of this connection on top of the server's own (a user's `per_user` credentials). */
  headers?: Record<string, string>;
  /** OAuth of this connection's user (`auth: oauth`). */
  authProvider?: OAuthClientProvider;
  connectTimeoutMs: number;
  maxBackoffMs: number;
  logger: Logger;
  /** The server's tool list changed (a `tools/list_changed` notification, or a (re)connection). */
  onToolsChanged(): void;
  /** The state or last error changed. */
  onStatus?(): void;
}

/** The server could not be reached, or failed while we talked to it; the message says what to do. */
export class McpUnavailableError extends Error {
  override name = 'McpUnavailableError';
}

/** The user must connect their account first (per_user headers or OAuth sign-in). */
export class McpAuthRequiredError extends Error {
  override name = 'McpAuthRequiredError';
}

const STDERR_TAIL = 2000;

/** The last error of a connection the server refused for want of authorization. */
export const AUTH_WANTED = 'the server wants authorization';

/**
 * One MCP client connection (a process for stdio, an HTTP session otherwise), kept open and reopened
 * on use after a failure with exponential back-off. Calls are capped at `max_concurrency` at once and
 * each carries its own timeout and abort signal (the SDK sends `notifications/cancelled`).
 */
export class McpConnection {
  state: McpConnectionState = 'idle';
  lastError: string | null = null;
  tools: McpToolInfo[] = [];
  connectedAt: Date | null = null;
  private client: Client | null = null;
  private connecting: Promise<void> | null = null;
  private failures = 0;
  private retryAt = 0;
  private stderrTail = '';
  private readonly slots: Semaphore;
  private closedByUs = false;

  constructor(private readonly options: McpConnectionOptions) {
    this.slots = new Semaphore(options.definition.max_concurrency);
  }

  /** Process id of a stdio server while it runs. */
  get pid(): number | null {
    return this.transport && this.transport instanceof mcpClientSdk().StdioClientTransport ? this.transport.pid : null;
  }

  private transport: Transport | null = null;

  /** Connects unless ready; while backing off after a failure it throws the last error at once. */
  ensure(): Promise<void> {
    if (this.state === 'ready' && this.client) return Promise.resolve();
    if (this.connecting) return this.connecting;
    if (this.state === 'failed' && Date.now() < this.retryAt) {
      const wait = Math.ceil((this.retryAt - Date.now()) / 1000);
      return Promise.reject(new McpUnavailableError(`${this.lastError ?? 'the server failed'} (next attempt in ${wait} s)`));
    }
    this.connecting = this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  /** Calls a tool on the server. Throws `McpUnavailableError` when the server cannot be reached or dies. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs: number): Promise<CallToolResult> {
    await this.ensure();
    const release = await this.slots.acquire(signal);
    try {
      const client = this.client;
      if (!client) throw new McpUnavailableError(this.lastError ?? 'the server is not connected');
      return (await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: timeoutMs, maxTotalTimeout: timeoutMs })) as CallToolResult;
    } catch (err) {
      if (signal.aborted) throw err;
      const message = (err as Error).message ?? String(err);
      if (/connection closed/i.test(message) || this.state !== 'ready') {
        throw new McpUnavailableError(`the server stopped during the call${this.describeExit()}; it is restarted on the next call`);
      }
      throw err;
    } finally {
      release();
    }
  }

  /** Lists the tools again (after `tools/list_changed`). */
  async refreshTools(): Promise<void> {
    const client = this.client;
    if (!client || this.state !== 'ready') return;
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.options.connectTimeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor && tools.length < 1000);
    this.tools = tools;
    this.options.onToolsChanged();
  }

  /** Closes the connection (a stdio server's process is stopped). */
  async close(): Promise<void> {
    this.closedByUs = true;
    const client = this.client;
    this.client = null;
    this.transport = null;
    this.setState('closed');
    await client?.close().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const { definition: def, name, connectTimeoutMs } = this.options;
    this.closedByUs = false;
    this.stderrTail = '';
    this.setState('connecting');
    try {
      const client = await this.open(def.transport === 'stdio' ? this.stdioTransport() : this.httpTransport('streamable'), connectTimeoutMs).catch(async (err) => {
        if (def.transport !== 'http' || err instanceof McpAuthRequiredError || !/\b(404|405)\b|not found|method not allowed/i.test(String((err as Error).message))) throw err;
        // The SDK's fallback for servers that only speak the older HTTP+SSE transport.
        this.options.logger.info({ server: name }, 'MCP server does not speak streamable HTTP; trying SSE');
        return this.open(this.httpTransport('sse'), connectTimeoutMs);
      });
      this.client = client;
      this.failures = 0;
      this.connectedAt = new Date();
      this.setState('ready', null);
      await this.refreshTools();
      this.options.logger.info({ server: name, tools: this.tools.length }, 'MCP server connected');
    } catch (err) {
      this.failures += 1;
      const backoff = Math.min(this.options.maxBackoffMs, 1000 * 2 ** (this.failures - 1));
      this.retryAt = Date.now() + backoff;
      const message = this.explain(err);
      this.setState('failed', message);
      this.options.logger.warn({ server: name, error: message, retryInMs: backoff }, 'MCP server could not be connected');
      const client = this.client;
      this.client = null;
      await client?.close().catch(() => undefined);
      if (err instanceof McpAuthRequiredError) throw err;
      throw new McpUnavailableError(message);
    }
  }

  /** Connects a client over `transport` within `timeoutMs` (start + initialize). */
  private async open(transport: Transport, timeoutMs: number): Promise<Client> {
    const { Client, ToolListChangedNotificationSchema } = mcpClientSdk();
    const client = new Client({ name: 'muninn', version: '1.0.0' }, { capabilities: {} });
    client.onerror = (err) => {
      // Lines on stdout that are not JSON-RPC land here; the connection itself goes on.
      const text = String(err?.message ?? err).slice(0, 300);
      this.lastError = `the server sent something that is not MCP: ${text}`;
      this.options.logger.warn({ server: this.options.name, error: text }, 'MCP protocol error');
      this.options.onStatus?.();
    };
    client.onclose = () => {
      if (this.client !== client || this.closedByUs) return;
      this.client = null;
      this.transport = null;
      this.failures += 1;
      this.retryAt = Date.now() + Math.min(this.options.maxBackoffMs, 500 * 2 ** (this.failures - 1));
      this.setState('failed', `the server closed the connection${this.describeExit()}`);
      this.options.logger.warn({ server: this.options.name, error: this.lastError }, 'MCP server connection closed');
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      await this.refreshTools().catch((err) => this.options.logger.warn({ server: this.options.name, err }, 'MCP tool list refresh failed'));
    });
    this.transport = transport;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new McpUnavailableError(`the server did not answer initialize within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([client.connect(transport, { timeout: timeoutMs }), timeout]);
      return client;
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  private stdioTransport(): Transport {
    const def = this.options.definition;
    const { StdioClientTransport, getDefaultEnvironment } = mcpClientSdk();
    // Only a minimal environment: nothing of Muninn's own (tokens, keys, database URLs) reaches the process.
    const transport = new StdioClientTransport({
      command: def.command!,
      args: def.args,
      env: { ...getDefaultEnvironment(), ...def.env },
      cwd: def.cwd,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    return transport;
  }

  private httpTransport(kind: 'streamable' | 'sse'): Transport {
    const def = this.options.definition;
    const headers = { ...def.headers, ...this.options.headers };
    const url = new URL(def.url!);
    const requestInit = { headers };
    const { SSEClientTransport, StreamableHTTPClientTransport } = mcpClientSdk();
    if (kind === 'sse') return new SSEClientTransport(url, { requestInit, authProvider: this.options.authProvider, eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }) } });
    return new StreamableHTTPClientTransport(url, { requestInit, authProvider: this.options.authProvider });
  }

  private describeExit(): string {
    const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ').slice(-300);
    return tail ? ` (stderr: ${tail})` : '';
  }

  /** A message an admin can act on. */
  private explain(err: unknown): string {
    const e = err as NodeJS.ErrnoException & { code?: unknown };
    const def = this.options.definition;
    if (e?.name === 'UnauthorizedError' || err instanceof McpAuthRequiredError) return AUTH_WANTED;
    if (e?.code === 'ENOENT' && def.transport === 'stdio') return `the command "${def.command}" was not found (check mcp.servers.${this.options.name}.command and PATH)`;
    if (e?.code === 'EACCES' && def.transport === 'stdio') return `the command "${def.command}" may not be run (permission denied)`;
    const message = (e?.message || String(err)).slice(0, 300);
    if (/connection closed/i.test(message)) return `the server exited before it answered${this.describeExit()}`;
    return `${message}${def.transport === 'stdio' ? this.describeExit() : ''}`;
  }

  private setState(state: McpConnectionState, error?: string | null): void {
    this.state = state;
    if (error !== undefined) this.lastError = error;
    this.options.onStatus?.();
  }
}
