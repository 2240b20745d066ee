import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local HTTP server with routes for the http_request tests; it counts every request by path. */
export class LocalHttpServer {
  readonly hits: string[] = [];
  port = 0;
  private readonly server: http.Server;

  constructor() {
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://local');
    this.hits.push(url.pathname);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const chain = /^\/chain\/(\d+)$/.exec(url.pathname);
      if (url.pathname === '/ok') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-internal': 'not shown' });
        res.end('hello from local');
      } else if (url.pathname === '/echo') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, host: req.headers.host, authorization: req.headers.authorization ?? null, body }));
      } else if (url.pathname === '/redirect') {
        res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/' });
        res.end();
      } else if (chain) {
        const n = Number(chain[1]);
        if (n === 0) {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('end of chain');
        } else {
          res.writeHead(302, { location: `/chain/${n - 1}` });
          res.end();
        }
      } else if (url.pathname === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('x'.repeat(5000));
      } else if (url.pathname === '/binary') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
      } else if (url.pathname === '/slow') {
        const t = setTimeout(() => res.end('late'), 3000);
        res.on('close', () => clearTimeout(t));
      } else {
        res.writeHead(404);
        res.end('not found');
      }
    });
  }
}
