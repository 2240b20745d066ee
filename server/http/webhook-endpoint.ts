import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from '../common/logger';
import { WebhookRefusal, type WebhookTrigger } from '../modules/webhooks';

function errorBody(message: string, code: string) {
  return { errors: [{ message, extensions: { code } }] };
}

const CODES: Record<number, string> = { 401: 'UNAUTHENTICATED', 403: 'FORBIDDEN', 429: 'RATE_LIMITED' };

/**
 * `POST /hooks/<name>` (DESIGN §8): the secret is checked before the body is read (401, nothing runs),
 * then the hook's rate limit (429 with Retry-After), then the body limit (413); an accepted call is
 * answered `202 { turnId, sessionId }` at once and its turn runs in the background.
 */
export function webhookRouter(trigger: WebhookTrigger, options: { maxBodyKb: number; logger: Logger }): Router {
  const router = express.Router();
  const refuse = (res: Response, err: unknown): void => {
    if (err instanceof WebhookRefusal) {
      if (err.retryAfterSeconds) res.setHeader('Retry-After', String(err.retryAfterSeconds));
      if (err.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
      res.status(err.status).json(errorBody(err.message, CODES[err.status]!));
      return;
    }
    options.logger.error({ err }, 'webhook call failed');
    res.status(500).json(errorBody('Internal server error', 'INTERNAL_SERVER_ERROR'));
  };
  router.post(
    '/hooks/:name',
    async (req: Request, res: Response, next: NextFunction) => {
      try {
        const hook = await trigger.authenticate(String(req.params.name), req.headers.authorization);
        await trigger.checkRate(hook);
        res.locals.hook = hook;
        next();
      } catch (err) {
        refuse(res, err);
      }
    },
    express.raw({ type: () => true, limit: `${options.maxBodyKb}kb` }),
    async (req: Request, res: Response) => {
      try {
        const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const idempotencyKey = req.headers['idempotency-key'];
        const accepted = await trigger.trigger(res.locals.hook, {
          body,
          contentType: req.headers['content-type'] ?? null,
          idempotencyKey: typeof idempotencyKey === 'string' ? idempotencyKey : null,
        });
        res.status(202).json({ turnId: accepted.turnId, sessionId: accepted.sessionId, duplicate: accepted.duplicate });
      } catch (err) {
        refuse(res, err);
      }
    },
    (err: Error & { type?: string }, _req: Request, res: Response, next: NextFunction) => {
      if (err.type === 'entity.too.large') {
        res.status(413).json(errorBody(`The webhook body is larger than the ${options.maxBodyKb} KiB limit (webhooks.max_body_kb).`, 'PAYLOAD_TOO_LARGE'));
        return;
      }
      next(err);
    },
  );
  return router;
}
