import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

// === A real MCP server over streamable HTTP (the SDK's server, on 127.0.0.1:0), for tests.
// Stateless: each POST gets a fresh server and transport. It records the Authorization header of every
// request and of every tool call, and can demand a bearer token from a set.

export interface TestMcpHttpServerOptions {
  /** Only these bearer tokens are accepted (401 otherwise); undefined accepts any request. */
  acceptTokens?: () => Set<string> | undefined;
  /**
   * An OAuth-protected resource (RFC 9728): its metadata names this authorization server, and only bearers
   * the server says are live are accepted (401 with `WWW-Authenticate: Bearer resource_metadata=…` otherwise).
   */
  oauth?: { issuer: string; check(authorization: string | null): unknown };
}

export interface RecordedCall {
  tool: string;
  args: Record<string, unknown>;
  authorization: string | null;
}

export class TestMcpHttpServer {
  readonly calls: RecordedCall[] = [];
  readonly requests: Array<{ method: string; authorization: string | null }> = [];

  private constructor(
    private readonly server: http.Server,
    private readonly options: TestMcpHttpServerOptions,
  ) {}

  static async start(options: TestMcpHttpServerOptions = {}): Promise<TestMcpHttpServer> {
    let self: TestMcpHttpServer | null = null;
    const server = http.createServer((req, res) => void self!.handle(req, res));
    self = new TestMcpHttpServer(server, options);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/mcp`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private mcpServer(authorization: string | null): McpServer {
    const server = new McpServer({ name: 'test-http', version: '1.0.0' });
    server.registerTool(
      'whoami',
      { description: 'Says which bearer token the call carried.', inputSchema: { note: z.string().optional() } },
      async (args) => {
        this.calls.push({ tool: 'whoami', args, authorization });
        return { content: [{ type: 'text', text: `token=${(authorization ?? 'none').replace(/^Bearer /, '')}` }] };
      },
    );
    server.registerTool(
      'multiply',
      { description: 'Multiplies two numbers.', inputSchema: { a: z.number(), b: z.number() } },
      async (args) => {
        this.calls.push({ tool: 'multiply', args, authorization });
        return { content: [{ type: 'text', text: `product=${args.a * args.b}` }] };
      },
    );
    return server;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const authorization = req.headers.authorization ?? null;
    this.requests.push({ method: req.method ?? '', authorization });
    const oauth = this.options.oauth;
    const origin = this.url.replace(/\/mcp$/, '');
    if (oauth && req.method === 'GET' && (req.url ?? '').startsWith('/.well-known/oauth-protected-resource')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ resource: this.url, authorization_servers: [oauth.issuer], bearer_methods_supported: ['header'] }));
      return;
    }
    if (oauth && (req.url ?? '').startsWith('/.well-known/')) {
      res.writeHead(404).end();
      return;
    }
    if (oauth && !oauth.check(authorization)) {
      res
        .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"` })
        .end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    const accepted = this.options.acceptTokens?.();
    if (accepted && !(authorization && accepted.has(authorization.replace(/^Bearer /, '')))) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
    const server = this.mcpServer(authorization);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }
}
