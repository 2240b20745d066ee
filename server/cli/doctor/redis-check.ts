import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createLogger } from '../../common/logger';
import { SecretRedactor } from '../../common/secret-redactor';
import type { AppConfig } from '../../config';
import { INSTALL_REDIS_HINT, ManagedRedis } from '../../redis/managed-redis';
import { safeRedisUrl } from '../../redis/redis-connections';
import { describeError, withTimeout, type CheckResult } from './check';

const TIMEOUT_MS = 3000;

/**
 * With REDIS_URL (redis.url): that server answers PING. Without: the managed `redis-server` binary
 * starts and answers, then is stopped again. The trial instance runs in a temporary folder on a free
 * port, never in `<data>/redis`, so a running `muninn serve` and its Redis are left alone.
 */
export function checkRedis(config: AppConfig): Promise<CheckResult> {
  return config.redis.url ? checkRedisUrl(config.redis.url) : checkManagedRedis(config);
}

async function checkRedisUrl(url: string): Promise<CheckResult> {
  const safe = safeRedisUrl(url);
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // ioredis rejects with "Connection is closed."; the 'error' event carries the reason (ECONNREFUSED, …).
  let lastError: unknown = null;
  client.on('error', (err) => {
    lastError = err;
  });
  try {
    await withTimeout(client.connect(), TIMEOUT_MS);
    const pong = await withTimeout(client.ping(), TIMEOUT_MS);
    if (pong !== 'PONG') {
      return { name: 'redis', verdict: 'FAIL', message: `${safe} answered "${pong}" to PING` };
    }
    return { name: 'redis', verdict: 'ok', message: `${safe} answers PING` };
  } catch (err) {
    return {
      name: 'redis',
      verdict: 'FAIL',
      message: `${safe} does not answer: ${describeError(lastError ?? err)}`,
      hint: 'start that Redis or fix REDIS_URL; unset it to let Muninn start its own redis-server',
    };
  } finally {
    // On an ended client, disconnect() would leave a 2 s timer behind (ioredis AbstractConnector).
    if (client.status !== 'end') client.disconnect();
  }
}

/** Whether `binary` is an executable file: a path as given, or a name found on PATH (as spawn looks it up). */
function findExecutable(binary: string): boolean {
  const candidates = binary.includes('/')
    ? [binary]
    : (process.env.PATH ?? '')
        .split(path.delimiter)
        .filter(Boolean)
        .map((dir) => path.join(dir, binary));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

async function checkManagedRedis(config: AppConfig): Promise<CheckResult> {
  const binary = config.redis.managed_binary;
  // Checked up front: ManagedRedis keeps polling until its start timeout even after a failed spawn.
  if (!findExecutable(binary)) {
    return {
      name: 'redis',
      verdict: 'FAIL',
      message: `REDIS_URL is not set and "${binary}" was not found`,
      hint: INSTALL_REDIS_HINT,
    };
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-doctor-redis-'));
  const managed = new ManagedRedis({
    binary,
    dir,
    port: 0,
    startTimeoutMs: 5000,
    logger: createLogger({ level: 'silent', redactor: new SecretRedactor() }),
  });
  try {
    await managed.start();
    return {
      name: 'redis',
      verdict: 'ok',
      message: `REDIS_URL is not set; a managed "${binary}" starts and answers PING`,
    };
  } catch (err) {
    const message = describeError(err).replace(` ${INSTALL_REDIS_HINT}`, '');
    return { name: 'redis', verdict: 'FAIL', message, hint: INSTALL_REDIS_HINT };
  } finally {
    await managed.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
