import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from '../common/logger';
import { MCP_OAUTH_CALLBACK_PATH, McpOAuthCallbackError } from '../modules/mcp';

export interface McpOAuthCallbackOptions {
  /** Completes a sign-in; returns the server's name. Throws `McpOAuthCallbackError` with a message to show. */
  complete(code: string, state: string): Promise<string>;
  logger: Logger;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(res: Response, status: number, title: string, text: string): void {
  res
    .status(status)
    .set({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'" })
    .send(`<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body style="font-family:sans-serif;max-width:36em;margin:4em auto"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`);
}

/**
 * `GET /oauth/mcp/callback`: where an MCP server's authorization server sends the user's browser back
 * after sign-in. The `state` binds it to the user who asked for the link (see `McpOAuth`); the page says
 * whether it worked and never shows a code or token.
 */
export function mcpOAuthCallbackRouter(options: McpOAuthCallbackOptions): Router {
  const router = express.Router();
  router.get(MCP_OAUTH_CALLBACK_PATH, async (req: Request, res: Response) => {
    const q = req.query;
    const code = typeof q.code === 'string' ? q.code : '';
    const state = typeof q.state === 'string' ? q.state : '';
    if (typeof q.error === 'string') {
      return page(res, 400, 'Sign-in not completed', `The authorization server answered: ${q.error.slice(0, 100)}. Ask Muninn for a new sign-in link.`);
    }
    if (!code || !state || code.length > 2048 || state.length > 2048) return page(res, 400, 'Sign-in not completed', 'This link is missing its code or state.');
    try {
      const server = await options.complete(code, state);
      page(res, 200, 'Connected', `Your account is connected to the MCP server "${server}". You can close this tab and ask Muninn again.`);
    } catch (err) {
      if (err instanceof McpOAuthCallbackError) return page(res, 400, 'Sign-in not completed', err.message);
      options.logger.error({ err }, 'MCP OAuth callback failed');
      page(res, 500, 'Sign-in not completed', 'Something went wrong on this server; try again later.');
    }
  });
  return router;
}
