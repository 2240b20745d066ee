import type { IncomingMessage, ServerResponse } from 'node:http';
import { HeaderMap, type ApolloServer } from '@apollo/server';
import type { Logger } from '../common/logger';
import type { GraphQLContext } from '../graphql/context';
import type { QueryFastPath } from './graphql-fast-path';

/** `Content-Type` values the direct path takes; anything else goes through Express (body-parser decides). */
const PLAIN_JSON = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** `Accept` values for which Apollo answers `application/json; charset=utf-8` (none, or plain JSON). */
const ACCEPTS_JSON = /^\s*(\*\/\*|application\/json)?\s*$/i;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The common `POST /graphql` (a UTF-8 JSON body with a Content-Length within the limit) handed straight to
 * Apollo, without Express's router, body-parser and response helpers, which cost more per request than
 * a small query itself. Returns false, having touched nothing, for every other request, which Express
 * then serves as before (its limits, error answers, the rest of the routes); what this path answers
 * itself (a body that is not a JSON object or array) it answers as Express's error handler does.
 */
export function createGraphQLPostHandler(deps: {
  apollo: ApolloServer<GraphQLContext>;
  bodyLimitBytes: number;
  logger: Logger;
  contextFor(authorization: string | undefined): Promise<GraphQLContext>;
  /** Answers repeated queries without Apollo's pipeline; what it declines goes to Apollo. */
  fastPath?: QueryFastPath;
  /** True once the server is stopping: every request then goes through Apollo (which refuses it). */
  stopping?(): boolean;
}): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { apollo, bodyLimitBytes, logger } = deps;
  return (req, res) => {
    if (req.method !== 'POST' || req.url !== '/graphql') return false;
    const headers = req.headers;
    const length = Number(headers['content-length']);
    if (!PLAIN_JSON.test(headers['content-type'] ?? '') || headers['transfer-encoding'] !== undefined) return false;
    if (headers['content-encoding'] !== undefined && headers['content-encoding'].toLowerCase() !== 'identity') return false;
    if (!Number.isInteger(length) || length <= 0 || length > bodyLimitBytes) return false;

    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => undefined);
    req.on('close', () => {
      // The client went away mid-body: nothing to answer, one line at debug as Express's error handler writes.
      if (!req.complete) logger.debug({ type: 'request.aborted', status: 400, reason: 'request aborted' }, 'HTTP request refused');
    });
    req.on('end', () => {
      let text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      let body: unknown;
      try {
        // Like express.json (strict): only an object or an array.
        if (!/^[\s]*[{[]/.test(text)) throw new SyntaxError('not an object or array');
        body = JSON.parse(text);
      } catch {
        sendJson(res, 400, { errors: [{ message: 'Request body is not valid JSON.', extensions: { code: 'BAD_REQUEST' } }] });
        return;
      }
      execute(req, res, body).catch((err: unknown) => {
        logger.error({ err }, 'unhandled HTTP error');
        if (!res.headersSent) sendJson(res, 500, { errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
        else res.destroy();
      });
    });
    return true;
  };

  async function execute(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (deps.fastPath && !deps.stopping?.() && ACCEPTS_JSON.test(req.headers.accept ?? '')) {
      const text = await deps.fastPath.run(body, () => deps.contextFor(req.headers.authorization));
      if (text !== null) {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
        res.end(text);
        return;
      }
    }
    const headers = new HeaderMap();
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
    }
    const response = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: 'POST', headers, search: '', body },
      context: () => deps.contextFor(req.headers.authorization),
    });
    for (const [key, value] of response.headers) res.setHeader(key, value);
    res.statusCode = response.status ?? 200;
    if (response.body.kind === 'complete') {
      res.setHeader('content-length', Buffer.byteLength(response.body.string));
      res.end(response.body.string);
      return;
    }
    for await (const chunk of response.body.asyncIterator) res.write(chunk);
    res.end();
  }
}
