import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import express, { type Request, type Response, type Router } from 'express';
import { AppError } from '../common/errors';
import type { Logger } from '../common/logger';
import type { UserDataService } from '../modules/userdata';

function errorBody(message: string, code: string) {
  return { errors: [{ message, extensions: { code } }] };
}

const GONE = 'This download link is unknown, expired or already used. Request a new export with exportUserData.';

/**
 * `GET /exports/<id>?token=…`: the archive of a user data export, once. The token is the credential (no
 * API token needed, so a browser can follow the link); a wrong, used or expired link is 404 whichever it
 * is, a link whose archive is still being built 409 (it stays valid). The file is removed once sent.
 */
export function exportDownloadRouter(service: UserDataService, logger: Logger): Router {
  const router = express.Router();
  router.get('/exports/:id', async (req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    try {
      if (req.method === 'HEAD') {
        // A look that does not use the link up: 200 ready, 409 still being built, 404 otherwise.
        const state = token ? await service.peekDownload(String(req.params.id), token) : null;
        res.status(state === 'ready' ? 200 : state === 'pending' ? 409 : 404).end();
        return;
      }
      const claimed = token ? await service.claimDownload(String(req.params.id), token) : null;
      if (!claimed) {
        res.status(404).json(errorBody(GONE, 'NOT_FOUND'));
        return;
      }
      const { size } = await stat(claimed.file);
      res.status(200);
      res.setHeader('Content-Type', 'application/gzip');
      res.setHeader('Content-Length', String(size));
      res.setHeader('Content-Disposition', `attachment; filename="muninn-export-${claimed.userId}.tar.gz"`);
      const stream = createReadStream(claimed.file);
      const done = () => void service.downloaded(claimed.file).catch((err) => logger.warn({ err }, 'could not remove a downloaded export'));
      stream.once('error', (err) => {
        logger.error({ err }, 'export download failed');
        res.destroy(err);
        done();
      });
      res.once('close', done);
      stream.pipe(res);
    } catch (err) {
      if (err instanceof AppError && err.code === 'CONFLICT') {
        res.setHeader('Retry-After', '1');
        res.status(409).json(errorBody(err.message, 'CONFLICT'));
        return;
      }
      logger.error({ err }, 'export download failed');
      res.status(500).json(errorBody('Internal server error', 'INTERNAL_SERVER_ERROR'));
    }
  });
  return router;
}
