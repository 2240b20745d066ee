import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../common/logger';
import type { HttpServerOptions, RunningHttpServer } from './http-server';

/**
 * The HTTP surface of a process without the API (`--role worker`): `/healthz`, `/readyz` and `/metrics`
 * only, so orchestrators can check it and Prometheus can scrape the turns it runs.
 */
export async function startOpsServer(options: Pick<HttpServerOptions, 'host' | 'port' | 'readiness' | 'metrics'> & { logger: Logger }): Promise<RunningHttpServer> {
  const send = (res: http.ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') return send(res, 405, 'application/json', JSON.stringify({ error: 'GET only' }));
    if (path === '/healthz') return send(res, 200, 'application/json', JSON.stringify({ status: 'ok' }));
    if (path === '/readyz') {
      void options.readiness().then((checks) => {
        const ok = Object.values(checks).every((v) => v === null);
        if (Object.entries(checks).some(([k, v]) => v !== null && k !== 'startup')) options.logger.warn({ checks }, 'not ready');
        send(res, ok ? 200 : 503, 'application/json', JSON.stringify({ status: ok ? 'ready' : 'not ready', checks: Object.fromEntries(Object.entries(checks).map(([k, v]) => [k, v === null ? 'ok' : 'unavailable'])) }));
      });
      return;
    }
    const metrics = options.metrics;
    if (path === '/metrics' && metrics) {
      const refused = metrics.check(req.headers.authorization, req.socket.remoteAddress);
      if (refused) return send(res, refused.status, 'text/plain', `${refused.message}\n`);
      void metrics.render().then(
        ({ contentType, body }) => send(res, 200, contentType, body),
        (err: unknown) => {
          options.logger.error({ err }, 'metrics scrape failed');
          send(res, 500, 'text/plain', 'metrics unavailable\n');
        },
      );
      return;
    }
    send(res, 404, 'application/json', JSON.stringify({ error: 'Not found. This process runs workers only (/healthz, /readyz, /metrics).' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
