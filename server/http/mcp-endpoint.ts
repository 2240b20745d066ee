import express, { type Request, type Response, type Router } from 'express';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ctx } from '../common/ctx';
import type { Logger } from '../common/logger';
import { TrustLevel } from '../common/trust';
import { parseAuthorization } from '../graphql/context-factory';
import { mcpServerSdk, type McpServeService } from '../modules/mcp';
import type { User } from '../modules/users';

export interface McpEndpointOptions {
  serve: McpServeService;
  /** The token's user as it is now and the token id, or null when the token is unknown or revoked. */
  authenticate(token: string): Promise<{ user: User; tokenId: string } | null>;
  /** Null when the token may go on, else the seconds until it may. */
  rateLimit?(tokenId: string): Promise<number | null>;
  maxBodyKb: number;
  version: string;
  logger: Logger;
}

/** A JSON-RPC error answer with an HTTP status (the request never reached the MCP server). */
function refuse(res: Response, status: number, message: string, headers: Record<string, string> = {}): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.status(status).json({ jsonrpc: '2.0', error: { code: -32001, message }, id: null });
}

/**
 * `/mcp`: Muninn as an MCP server over streamable HTTP (stateless: every POST is answered on its own, so
 * any API process can answer any request). `Authorization: Bearer <API token>` is checked on every
 * request, before the body is read; the server then acts as that token's user with their trust as it is
 * now: `tools/list` shows what they may use, and `tools/call` runs through the served tools' pipeline,
 * which checks trust and the `mcp` channel switch again and audits the call.
 */
export function mcpRouter(options: McpEndpointOptions): Router {
  const { serve, logger } = options;
  const router = express.Router();

  router.all('/mcp', async (req: Request, res: Response, next) => {
    try {
      const token = parseAuthorization(req.headers.authorization);
      if (!token) return refuse(res, 401, 'Missing API token: send "Authorization: Bearer <Muninn API token>".', { 'WWW-Authenticate': 'Bearer' });
      const caller = await options.authenticate(token);
      if (!caller) return refuse(res, 401, 'The API token is unknown or revoked.', { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
      if (caller.user.trust === TrustLevel.BLOCKED) return refuse(res, 403, 'This user is blocked.');
      const wait = await options.rateLimit?.(caller.tokenId);
      if (wait !== null && wait !== undefined) return refuse(res, 429, 'Too many requests; try again later.', { 'Retry-After': String(wait) });
      if (req.method !== 'POST') return refuse(res, 405, 'This MCP server is stateless: send JSON-RPC requests with POST.', { Allow: 'POST' });
      res.locals.caller = caller;
      next();
    } catch (err) {
      logger.error({ err }, 'MCP request could not be authenticated');
      refuse(res, 500, 'Internal server error');
    }
  });

  router.post('/mcp', express.json({ limit: `${options.maxBodyKb}kb` }), async (req: Request, res: Response) => {
    const { user, tokenId } = res.locals.caller as { user: User; tokenId: string };
    const ctx = new Ctx({ actor: { kind: 'user', userId: user.id, trust: user.trust, tokenId }, logger: logger.child({ userId: user.id }), channel: 'mcp' });
    const { McpServer, StreamableHTTPServerTransport, ListToolsRequestSchema, CallToolRequestSchema } = mcpServerSdk();
    const server = new McpServer({ name: 'muninn', version: options.version }, { capabilities: { tools: {} } });
    server.server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: (await serve.list(ctx)).map((t) => ({ name: t.name, description: t.description, inputSchema: { type: 'object' as const, ...t.parameters } })),
    }));
    server.server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const outcome = await serve.call(ctx, request.params.name, request.params.arguments ?? {}, extra.signal);
      return { content: [{ type: 'text', text: outcome.output }], isError: !outcome.ok };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      logger.error({ err }, 'MCP request failed');
      if (!res.headersSent) refuse(res, 500, 'Internal server error');
    }
  });

  return router;
}
