import { spawn } from 'node:child_process';
/**
 * The managed Redis (issue 2 "Redis"): a redis-server child process with its append-only file in the data
 * folder, a clear error when Redis is missing, and App.create starting and stopping its own when
 * `redis.url` is null.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { App } from '../../server/app';
import { ConfigError } from '../../server/common/errors';
import { createLogger } from '../../server/common/logger';
import { SecretRedactor } from '../../server/common/secret-redactor';
import { ManagedRedis } from '../../server/redis/managed-redis';
import { LogCapture } from '../support/log-capture';
import { testConfig } from '../support/test-app';
import { pidAlive } from '../support/pid-alive';

const dirs: string[] = [];
function tmpDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-managed-redis-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function logger() {
  const logs = new LogCapture();
  return {
    logs,
    logger: createLogger({ level: 'debug', destination: logs, redactor: new SecretRedactor() }),
  };
}


async function waitUntilGone(pid: number, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (pidAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return !pidAlive(pid);
}

/** Every file below `dir`, relative. */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

async function withClient<T>(url: string, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  await redis.connect();
  try {
    return await fn(redis);
  } finally {
    await redis.quit();
  }
}

const pidOf = (dir: string) => Number(readFileSync(path.join(dir, 'redis.pid'), 'utf8'));

it('starts redis-server in the folder, answers PING, and keeps data across a restart (append-only file)', async () => {
  const dir = tmpDir();
  const first = new ManagedRedis({ dir, logger: logger().logger });
  const url = await first.start();
  expect(url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
  const pid = pidOf(dir);
  expect(pidAlive(pid)).toBe(true);
  await withClient(url, async (redis) => {
    expect(await redis.ping()).toBe('PONG');
    expect(await redis.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
    expect(await redis.config('GET', 'dir')).toEqual(['dir', dir]);
    await redis.set('muninn:test:kept', 'across restarts');
  });
  await first.stop();
  expect(await waitUntilGone(pid)).toBe(true);
  expect(existsSync(path.join(dir, 'redis.pid'))).toBe(false);
  expect(filesBelow(dir).some((f) => /muninn\.aof/.test(f))).toBe(true);

  const second = new ManagedRedis({ dir, logger: logger().logger });
  const url2 = await second.start();
  try {
    await withClient(url2, async (redis) =>
      expect(await redis.get('muninn:test:kept')).toBe('across restarts'),
    );
  } finally {
    await second.stop();
  }
});

it('stops a managed Redis left behind by a crashed run before starting a new one', async () => {
  const dir = tmpDir();
  const crashed = new ManagedRedis({ dir, logger: logger().logger });
  await crashed.start();
  const stalePid = pidOf(dir);
  // The "crashed" run never calls stop(); the next start finds its pid file.
  const { logs, logger: log } = logger();
  const next = new ManagedRedis({ dir, logger: log });
  await next.start();
  try {
    expect(await waitUntilGone(stalePid)).toBe(true);
    expect(pidOf(dir)).not.toBe(stalePid);
    expect(logs.text).toMatch(/left behind by an earlier run/);
  } finally {
    await next.stop();
  }
});

it('refuses to start beside a live Muninn that runs its managed Redis on the same data folder', async () => {
  const dir = tmpDir();
  const first = new ManagedRedis({ dir, logger: logger().logger });
  await first.start();
  const firstPid = pidOf(dir);
  // The Redis belongs to another Muninn process that still runs (a node process standing in for it).
  const owner = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  try {
    writeFileSync(path.join(dir, 'redis.owner'), String(owner.pid));
    const second = new ManagedRedis({ dir, logger: logger().logger });
    await expect(second.start()).rejects.toThrow(
      new RegExp(`Another Muninn server \\(pid ${owner.pid}\\) is running on this data folder .*kill -TERM ${owner.pid}.*own data_dir`),
    );
    // The first one's Redis was left alone.
    expect(pidAlive(firstPid)).toBe(true);
    expect(pidOf(dir)).toBe(firstPid);
    // Once that process is gone, its Redis counts as left behind and the next start replaces it.
    owner.kill('SIGKILL');
    await new Promise((r) => owner.once('exit', r));
    const third = new ManagedRedis({ dir, logger: logger().logger });
    await third.start();
    expect(await waitUntilGone(firstPid)).toBe(true);
    await third.stop();
  } finally {
    owner.kill('SIGKILL');
    await first.stop();
  }
});

it('a missing redis-server binary gives a clear error: install Redis or set REDIS_URL', async () => {
  // Something that is not Redis listens on the port, so the readiness loop's attempts can be counted.
  let attempts = 0;
  const decoy = net.createServer((socket) => {
    attempts += 1;
    socket.on('data', () => socket.end('-ERR not redis\r\n'));
  });
  await new Promise<void>((resolve) => decoy.listen(0, '127.0.0.1', resolve));
  const port = (decoy.address() as net.AddressInfo).port;
  const managed = new ManagedRedis({
    dir: tmpDir(),
    binary: 'redis-server-missing',
    port,
    logger: logger().logger,
  });
  const error = await managed.start().then(
    () => null,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ConfigError);
  // It gives up at once: no readiness polling goes on after the error.
  await new Promise((r) => setTimeout(r, 100));
  const settled = attempts;
  await new Promise((r) => setTimeout(r, 400));
  expect(attempts).toBe(settled);
  await new Promise<void>((resolve) => decoy.close(() => resolve()));
  const message = (error as Error).message;
  expect(message).toMatch(/"redis-server-missing" was not found and REDIS_URL is not set/);
  expect(message).toMatch(/Install Redis .*apt-get install -y redis-server/);
  expect(message).toMatch(/or set REDIS_URL=redis:\/\//);
});

it('App.create with redis.url null starts its own Redis, is ready, and leaves no process after dispose', async () => {
  const dataDir = tmpDir();
  const config = testConfig(dataDir, { redis: { url: null } });
  expect(config.redis.url).toBeNull();
  const logs = new LogCapture();
  const app = await App.create({ config, logDestination: logs });
  let disposed = false;
  try {
    const redisDir = path.join(dataDir, 'redis');
    const pid = pidOf(redisDir);
    expect(pidAlive(pid)).toBe(true);
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain('redis-server');
    const url = await app.listen();
    const ready = await fetch(`${url}/readyz`);
    expect(await ready.json()).toMatchObject({ checks: { database: 'ok', redis: 'ok' } });
    expect(logs.text).toMatch(/started managed Redis/);

    await app.dispose();
    disposed = true;
    expect(await waitUntilGone(pid)).toBe(true);
    expect(existsSync(path.join(redisDir, 'redis.pid'))).toBe(false);
    expect(logs.text).toMatch(/stopped managed Redis/);
    expect(logs.text).not.toMatch(/stopped unexpectedly/);
  } finally {
    if (!disposed) await app.dispose();
  }
});

it('App.create fails with the install hint when there is neither REDIS_URL nor a redis-server', async () => {
  const config = testConfig(tmpDir(), { redis: { url: null, managed_binary: 'redis-server-missing' } });
  await expect(App.create({ config, logDestination: new LogCapture() })).rejects.toThrow(
    /Install Redis .* or set REDIS_URL/,
  );
});
