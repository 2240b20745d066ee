import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from '../common/logger';
import { TrustLevel } from '../common/trust';
import {
  ChunkWriter,
  completionBody,
  completionId,
  modelList,
  modelObject,
  OpenAIError,
  parseChatCompletionRequest,
  type ApiCaller,
  type ApiChannel,
  type ApiRequestLimits,
  type CompletionOutcome,
} from '../channels/api';
import { parseAuthorization } from '../graphql/context-factory';

export interface OpenAIEndpointOptions {
  channel: ApiChannel;
  /** The token's user as it is now and the token id, or null when the token is unknown or revoked. */
  authenticate(token: string): Promise<ApiCaller | null>;
  /** Null when the token may go on, else the seconds until it may (`channels.api.rate_per_minute`). */
  rateLimit(tokenId: string): Promise<number | null>;
  limits: ApiRequestLimits;
  maxBodyKb: number;
  /** `channels.api.enabled`. */
  enabled(): boolean;
  logger: Logger;
}

function send(res: Response, err: OpenAIError): void {
  if (err.retryAfterSeconds) res.setHeader('Retry-After', String(err.retryAfterSeconds));
  if (err.shouldRetry !== null) res.setHeader('x-should-retry', String(err.shouldRetry));
  if (err.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
  res.status(err.status).json(err.body());
}

/**
 * The OpenAI-compatible API on the main port (DESIGN §10): `GET /v1/models`, `GET /v1/models/<id>`,
 * `POST /v1/chat/completions` (JSON, or SSE when `stream`). The token is checked before the body is read,
 * then the token's rate limit; the body is read by Express's JSON parser within `channels.api.max_body_kb`.
 * Every refusal is OpenAI's error shape with its status.
 */
export function openAIRouter(options: OpenAIEndpointOptions): Router {
  const { channel, logger } = options;
  const router = express.Router();

  const fail = (res: Response, err: unknown): void => {
    if (err instanceof OpenAIError) return send(res, err);
    logger.error({ err }, 'OpenAI-compatible API request failed');
    send(res, new OpenAIError(500, 'Internal server error', 'api_error', 'internal_error'));
  };

  const authenticate = async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (!options.enabled()) throw OpenAIError.forbidden('The OpenAI-compatible API is turned off on this server (channels.api.enabled).', 'api_disabled');
      const header = req.headers.authorization;
      if (!header) throw OpenAIError.unauthenticated('Missing API token: send "Authorization: Bearer <Muninn API token>".');
      const token = parseAuthorization(header);
      const caller = token ? await options.authenticate(token) : null;
      if (!caller) throw OpenAIError.unauthenticated('The API token is unknown or revoked.');
      if (caller.user.trust === TrustLevel.BLOCKED) throw OpenAIError.forbidden('This user is blocked.');
      const wait = await options.rateLimit(caller.tokenId);
      if (wait !== null) throw OpenAIError.rateLimited(wait);
      res.locals.caller = caller;
      next();
    } catch (err) {
      fail(res, err);
    }
  };

  router.use('/v1', authenticate);

  router.get('/v1/models', (_req, res) => {
    res.json(modelList(channel.models()));
  });

  router.get('/v1/models/:id', (req, res) => {
    try {
      res.json(modelObject(channel.model(String(req.params.id))));
    } catch (err) {
      fail(res, err);
    }
  });

  router.post('/v1/chat/completions', express.json({ limit: `${options.maxBodyKb}kb` }), async (req: Request, res: Response) => {
    const caller = res.locals.caller as ApiCaller;
    const aborted = new AbortController();
    // The client hung up before the answer was complete: its turn is stopped.
    res.on('close', () => {
      if (!res.writableFinished) aborted.abort();
    });
    let writer: ChunkWriter | null = null;
    try {
      if (req.body === undefined) throw OpenAIError.invalid('The request body must be JSON (Content-Type: application/json).');
      const request = parseChatCompletionRequest(req.body, options.limits);
      const sessionHeader = req.headers['x-muninn-session'];
      const sessionKey = typeof sessionHeader === 'string' ? sessionHeader.trim() : null;
      const model = channel.check(request, sessionKey);
      const requestId = randomUUID();
      const head = { id: completionId(requestId), created: Math.floor(Date.now() / 1000), model: model.id };
      // The stream's headers go out with the first delta, so a refusal before it still gets its status.
      const stream = (): ChunkWriter => {
        if (writer) return writer;
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
        res.socket?.setNoDelay(true);
        writer = new ChunkWriter(head, request.includeUsage, (line) => void res.write(line));
        return writer;
      };
      const outcome: CompletionOutcome = await channel.complete(
        caller,
        request,
        sessionKey,
        (text) => {
          if (request.stream && !aborted.signal.aborted) stream().delta(text);
        },
        aborted.signal,
        requestId,
      );
      if (aborted.signal.aborted) return;
      if (!request.stream) {
        res.json(completionBody(outcome));
        return;
      }
      stream().end(outcome);
      res.end();
    } catch (err) {
      if (aborted.signal.aborted) return;
      if (writer) {
        const e = err instanceof OpenAIError ? err : new OpenAIError(500, 'Internal server error', 'api_error', 'internal_error');
        if (!(err instanceof OpenAIError)) logger.error({ err }, 'OpenAI-compatible API stream failed');
        (writer as ChunkWriter).error(e.body());
        res.end();
        return;
      }
      fail(res, err);
    }
  });

  router.use('/v1', (req, res) => {
    send(res, new OpenAIError(404, `Unknown endpoint ${req.method} /v1${req.path}. This server offers GET /v1/models and POST /v1/chat/completions.`, 'invalid_request_error', 'unknown_url'));
  });

  router.use('/v1', (err: Error & { type?: string; status?: number }, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    if (err.type === 'entity.too.large') return send(res, OpenAIError.tooLarge(`The request body is larger than the ${options.maxBodyKb} KiB limit (channels.api.max_body_kb).`));
    if (err.type === 'entity.parse.failed') return send(res, OpenAIError.invalid('The request body is not valid JSON.', null, 'invalid_json'));
    if (err.status && err.status < 500) return send(res, new OpenAIError(err.status, err.message, 'invalid_request_error', err.status === 415 ? 'unsupported_media_type' : 'invalid_request'));
    fail(res, err);
  });

  return router;
}
