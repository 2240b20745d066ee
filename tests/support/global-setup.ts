import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ensureAdminUiBuilt } from './admin-ui-build';

/**
 * Makes sure the suite has a Redis: TEST_REDIS_URL / REDIS_URL when set, else 127.0.0.1:6379 when it
 * answers, else a throw-away redis-server on a free port (stopped in global-teardown). Tests isolate
 * themselves with unique key prefixes, so sharing one server is safe.
 */
function ping(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.setTimeout(500, () => (s.destroy(), resolve(false)));
    s.on('error', () => resolve(false));
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => (s.destroy(), resolve(d.toString().startsWith('+PONG'))));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export default async function globalSetup(): Promise<void> {
  ensureAdminUiBuilt();
  if (process.env.TEST_REDIS_URL) return;
  if (process.env.REDIS_URL) {
    process.env.TEST_REDIS_URL = process.env.REDIS_URL;
    return;
  }
  if (await ping(6379)) {
    process.env.TEST_REDIS_URL = 'redis://127.0.0.1:6379';
    return;
  }
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-test-redis-'));
  try {
    execFileSync('redis-server', ['--version']);
  } catch {
    throw new Error('Tests need Redis: install redis-server (apt-get install -y redis-server) or set TEST_REDIS_URL.');
  }
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir], {
    stdio: 'ignore',
    detached: true,
  });
  child.unref();
  for (let i = 0; i < 100 && !(await ping(port)); i++) await new Promise((r) => setTimeout(r, 50));
  writeFileSync(path.join(os.tmpdir(), 'muninn-test-redis.pid'), String(child.pid));
  process.env.TEST_REDIS_URL = `redis://127.0.0.1:${port}`;
}
