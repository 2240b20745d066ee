import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from '../common/logger';

/** Finds the built admin UI (`admin-ui/dist`) above this file, from the sources or from `dist/`. */
export function findAdminUiDist(from = __dirname): string | null {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'admin-ui', 'dist');
    if (existsSync(path.join(dir, 'admin-ui', 'package.json'))) return existsSync(path.join(candidate, 'index.html')) ? candidate : null;
    if (path.dirname(dir) === dir) return null;
  }
}

/**
 * Serves the admin console at /admin: hashed assets cached for a year, every other path under /admin
 * answered with index.html (the app routes in the browser), strict security headers (helmet; scripts and
 * connections only to this origin). When the UI is not built, /admin says how to build it.
 */
export function mountAdminUi(app: Express, logger: Logger, dir = findAdminUiDist()): void {
  const headers = helmet({
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:', 'blob:'],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        frameAncestors: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
      },
    },
    crossOriginEmbedderPolicy: false,
  });
  // Non-strict routing also matches "/admin/" here: redirect only the bare path.
  app.get('/admin', (req, res, next) => (req.originalUrl.split('?')[0] === '/admin' ? res.redirect(301, '/admin/') : next()));
  if (!dir) {
    logger.debug('the admin UI is not built (admin-ui/dist is missing); run `npm run build`');
    app.use('/admin', headers, (_req, res) => {
      res.status(503).type('text').send('The admin UI is not built. Run `npm run build` (or `npm start`), then reload.');
    });
    return;
  }
  const index = path.join(dir, 'index.html');
  app.use(
    '/admin',
    headers,
    express.static(dir, {
      index: false,
      fallthrough: true,
      setHeaders: (res, file) => res.setHeader('Cache-Control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache'),
    }),
    (req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      // A missing asset is a 404, not the app shell.
      if (req.path.startsWith('/assets/')) return res.status(404).type('text').send('Not found');
      res.setHeader('Cache-Control', 'no-cache');
      res.sendFile(index);
    },
  );
}
