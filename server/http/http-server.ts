import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { GraphQLError, getOperationAST, getVariableValues, parse, specifiedRules, validate, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import { WebSocketServer } from 'ws';
import type { Logger } from '../common/logger';
import type { GraphQLContext } from '../graphql/context';
import { EXPLORER_HTML } from '../graphql/explorer';
import { createFormatError } from '../graphql/format-error';
import type { QueryLimits } from '../graphql/limits';
import { mountAdminUi } from './admin-ui';
import { decodeRequestBody, hasEncodedBody } from './content-encoding';
import { createGraphQLPostHandler } from './graphql-post';
import { createQueryFastPath } from './graphql-fast-path';
import { serveGraphQLWs } from './graphql-ws-transport';
import { httpOperationGuard, introspectionRefusal } from './operation-guard';

export interface HttpServerOptions {
  host: string;
  port: number;
  bodyLimitKb: number;
  /** Largest body a compressed request of this path may decode to. @default bodyLimitKb */
  decodedBodyLimitBytes?: (url: string) => number;
  explorer: boolean;
  /** Answer introspection without an API token (`graphql.public_introspection`). */
  publicIntrospection: boolean;
  schema: GraphQLSchema;
  limits: QueryLimits;
  logger: Logger;
  /** Removes secrets from the text of GraphQL errors (the app's SecretRedactor). @default none */
  redact?: (text: string) => string;
  /** Builds the GraphQL context from an `Authorization` header value (HTTP) or connection param (WS). */
  contextFor(authorization: string | undefined): Promise<GraphQLContext>;
  /** `/v1`: the OpenAI-compatible API (absent without the chat services). */
  openai?: Router;
  /** `POST /hooks/<name>`: the app's webhooks (mounted before the channel webhooks). */
  hooks?: Router;
  /** `GET /exports/<id>?token=…`: one-time downloads of user data exports. */
  exports?: Router;
  /** `/mcp`: Muninn as an MCP server (streamable HTTP). */
  mcp?: Router;
  /** `POST /uploads`: documents as multipart uploads (absent without the documents layer). */
  uploads?: Router;
  /** Extra POST endpoints (channel webhooks), mounted with a JSON body parser. */
  webhooks?: () => Array<{ path: string; handler: (req: Request, res: Response) => void }>;
  /** GET /metrics (Prometheus): the scrape body and who may read it; absent when metrics are off. */
  metrics?: {
    render(): Promise<{ contentType: string; body: string }>;
    check(authorization: string | undefined, remoteAddress: string | undefined): { status: number; message: string } | null;
  };
  /** Readiness checks: name → null when fine, else the problem. */
  readiness(): Promise<Record<string, string | null>>;
}

export interface RunningHttpServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

function errorBody(message: string, code: string) {
  return { errors: [{ message, extensions: { code } }] };
}

/**
 * Logs each HTTP GraphQL operation at debug level: name, type, user, duration and error codes. Never the
 * variables, headers or result, which may hold tokens and private text.
 */
function operationLogPlugin(logger: Logger): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      const started = Date.now();
      return {
        async willSendResponse({ operationName, operation, contextValue, response }) {
          const errors = response.body.kind === 'single' ? response.body.singleResult.errors : undefined;
          logger.debug(
            {
              transport: 'http',
              operation: operationName ?? null,
              type: operation?.operation ?? null,
              userId: contextValue?.ctx?.userId ?? null,
              ms: Date.now() - started,
              ...(errors?.length ? { errors: errors.map((e) => e.extensions?.code ?? 'UNKNOWN') } : {}),
            },
            'graphql operation',
          );
        },
      };
    },
  };
}

/** Express 5 + Apollo Server 5 + graphql-ws on one port: /graphql (HTTP, WS), /healthz, /readyz, /metrics. */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const { schema, limits, logger } = options;
  const formatError = createFormatError(logger, options.redact);
  const app = express();
  app.disable('x-powered-by');
  // POST /graphql in its common form skips Express (see graphql-post.ts); everything else is Express's.
  let graphqlPost: ((req: http.IncomingMessage, res: http.ServerResponse) => boolean) | null = null;
  const dispatch = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!graphqlPost?.(req, res)) app(req, res);
  };
  const httpServer = http.createServer((req, res) => {
    if (hasEncodedBody(req)) decodeRequestBody(req, res, options.decodedBodyLimitBytes?.(req.url ?? '/') ?? options.bodyLimitKb * 1024, (decoded) => dispatch(decoded, res));
    else dispatch(req, res);
  });
  // Keep idle connections longer than clients and proxies do (60 s is common), so a client never
  // reuses a socket the server is closing at that moment (ECONNRESET on a POST).
  httpServer.keepAliveTimeout = 65_000;
  httpServer.headersTimeout = 66_000;

  // === WebSocket (graphql-ws): same limits and error masking as HTTP
  const wss = new WebSocketServer({ server: httpServer, path: '/graphql', maxPayload: options.bodyLimitKb * 1024 });
  const wsCleanup = serveGraphQLWs(
    {
      schema,
      onSubscribe: async (ctx, _id, payload) => {
        let document;
        try {
          document = parse(payload.query, { maxTokens: limits.maxTokens });
        } catch (err) {
          const message = err instanceof GraphQLError ? err.message : 'Invalid query';
          return [new GraphQLError(message, { extensions: { code: 'GRAPHQL_PARSE_FAILED' } })];
        }
        const errors = validate(schema, document, [...specifiedRules, ...limits.validationRules]);
        if (errors.length) return errors.map((e) => new GraphQLError(formatError(e.toJSON(), e).message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
        // Bad variables are the caller's mistake: BAD_USER_INPUT naming the variable, as on HTTP.
        const operation = getOperationAST(document, payload.operationName);
        if (operation) {
          const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], payload.variables ?? {}, { maxErrors: 20 });
          if (coerced.errors) return coerced.errors.map((e) => new GraphQLError(e.message, { extensions: { code: 'BAD_USER_INPUT' } }));
        }
        // A fresh context per operation, not per connection: a token revoked or a trust changed while the
        // socket stays open takes effect at the next operation, and DataLoader caches never outlive it.
        const auth = ctx.connectionParams?.authorization;
        let contextValue: GraphQLContext;
        try {
          contextValue = await options.contextFor(typeof auth === 'string' ? auth : undefined);
        } catch (err) {
          logger.error({ err }, 'unexpected error while authenticating a WebSocket operation');
          return [new GraphQLError('Internal server error', { extensions: { code: 'INTERNAL_SERVER_ERROR' } })];
        }
        const refused = introspectionRefusal(document, contextValue, options.publicIntrospection);
        if (refused) return [refused];
        logger.debug({ transport: 'ws', operation: operation?.name?.value ?? null, type: operation?.operation ?? null, userId: contextValue.ctx.userId }, 'graphql operation');
        const args: ExecutionArgs = {
          schema,
          document,
          variableValues: payload.variables,
          operationName: payload.operationName,
          contextValue,
        };
        return args;
      },
      onNext: (_ctx, _id, _payload, _args, result) => {
        if (!('errors' in result) || !result.errors?.length) return result;
        return {
          ...result,
          errors: result.errors.map((e) => {
            const f = formatError(e.toJSON(), e);
            return new GraphQLError(f.message, { path: f.path, extensions: f.extensions });
          }),
        };
      },
    },
    wss,
    logger,
  );

  // === Apollo over HTTP
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    formatError,
    includeStacktraceInErrorResponses: false,
    introspection: true,
    allowBatchedHttpRequests: false,
    // The process owns SIGINT/SIGTERM (`muninn serve` drains and exits 0). Apollo's own handling, on in
    // production, stops Apollo and sends the signal again, which ended the process at once.
    stopOnTerminationSignals: false,
    validationRules: limits.validationRules,
    parseOptions: { maxTokens: limits.maxTokens },
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      { async serverWillStart() { return { async drainServer() { await wsCleanup.dispose(); } }; } },
      ApolloServerPluginLandingPageDisabled(),
      // No field sets a cache hint (and POST answers are not cached): without this, Apollo wraps every
      // field resolver to collect hints, which a list of nodes pays per field.
      ApolloServerPluginCacheControlDisabled(),
      operationLogPlugin(logger),
      httpOperationGuard(options.publicIntrospection),
      ...limits.plugins,
    ],
  });
  await apollo.start();
  let closing: Promise<void> | null = null;
  graphqlPost = createGraphQLPostHandler({
    apollo,
    bodyLimitBytes: options.bodyLimitKb * 1024,
    logger,
    contextFor: options.contextFor,
    fastPath: createQueryFastPath({ schema, validationRules: limits.validationRules, maxTokens: limits.maxTokens, logger }),
    stopping: () => closing !== null,
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const checks = await options.readiness();
    const ok = Object.values(checks).every((v) => v === null);
    // Details go to the log, not to anonymous callers.
    if (Object.entries(checks).some(([k, v]) => v !== null && k !== 'startup')) logger.warn({ checks }, 'not ready');
    res.status(ok ? 200 : 503).json({ status: ok ? 'ready' : 'not ready', checks: Object.fromEntries(Object.entries(checks).map(([k, v]) => [k, v === null ? 'ok' : 'unavailable'])) });
  });
  const metrics = options.metrics;
  if (metrics) {
    app.get('/metrics', async (req, res) => {
      const refused = metrics.check(req.headers.authorization, req.socket.remoteAddress);
      if (refused) {
        res.status(refused.status).type('text/plain').send(`${refused.message}\n`);
        return;
      }
      const { contentType, body } = await metrics.render();
      res.type(contentType).send(body);
    });
  }
  if (options.explorer) {
    app.get('/graphql', (req, res, next) => {
      if (req.accepts(['application/json', 'text/html']) === 'text/html' && !req.query.query) {
        res.type('html').send(EXPLORER_HTML);
        return;
      }
      next();
    });
  }
  app.use(
    '/graphql',
    express.json({ limit: `${options.bodyLimitKb}kb` }),
    expressMiddleware(apollo, { context: async ({ req }) => options.contextFor(req.headers.authorization) }),
  );
  if (options.openai) app.use(options.openai);
  if (options.mcp) app.use(options.mcp);
  if (options.hooks) app.use(options.hooks);
  if (options.exports) app.use(options.exports);
  if (options.uploads) app.use(options.uploads);
  // Webhooks are looked up per request, so a channel started later (plugin settings) is reachable.
  app.post(/^\/hooks\/.+/, express.json({ limit: `${options.bodyLimitKb}kb` }), (req, res, next) => {
    const hook = options.webhooks?.().find((h) => h.path === req.path);
    if (!hook) return next();
    hook.handler(req, res);
  });
  mountAdminUi(app, logger);
  app.use((_req, res) => {
    res.status(404).json(errorBody('Not found. GraphQL is served at /graphql.', 'NOT_FOUND'));
  });
  app.use((err: Error & { status?: number; type?: string }, req: Request, res: Response, _next: NextFunction) => {
    if (err.type === 'entity.too.large') {
      res.status(413).json(errorBody(`Request body is larger than the ${options.bodyLimitKb} KiB limit.`, 'PAYLOAD_TOO_LARGE'));
      return;
    }
    if (err.type === 'entity.parse.failed') {
      res.status(400).json(errorBody('Request body is not valid JSON.', 'BAD_REQUEST'));
      return;
    }
    if (err.type === 'request.aborted' || (err.status && err.status < 500)) {
      // The client's doing (hung up mid-body, wrong encoding): one line at debug, no stack, so anonymous
      // clients cannot flood the error log.
      logger.debug({ type: err.type ?? null, status: err.status ?? null, reason: err.message }, 'HTTP request refused');
      if (!res.headersSent && !res.writableEnded && !req.destroyed) {
        res.status(err.status && err.status < 500 ? err.status : 400).json(errorBody(err.message, err.status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'BAD_REQUEST'));
      }
      return;
    }
    logger.error({ err }, 'unhandled HTTP error');
    res.status(err.status && err.status < 500 ? err.status : 500).json(errorBody('Internal server error', 'INTERNAL_SERVER_ERROR'));
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port, options.host, () => resolve());
  });
  const port = (httpServer.address() as AddressInfo).port;
  const shownHost = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  const url = `http://${shownHost}:${port}`;
  return {
    url,
    port,
    close: () => (closing ??= apollo.stop()),
  };
}
