import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ConfigError } from '../common/errors';
import type { Logger } from '../common/logger';

export interface ManagedRedisOptions {
  /** redis-server binary. @default 'redis-server' */
  binary?: string;
  /** Folder for the append-only file and pid file. */
  dir: string;
  /** Port; 0 picks a free one. @default 0 */
  port?: number;
  logger: Logger;
  /** How long to wait for the server to answer PING. @default 10000 */
  startTimeoutMs?: number;
}

export const INSTALL_REDIS_HINT =
  'Install Redis (Debian/Ubuntu: "apt-get install -y redis-server"; macOS: "brew install redis") so Muninn can start its own, or set REDIS_URL=redis://host:6379 to use an existing one.';

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let buf = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      buf += d.toString();
      if (buf.includes('\r\n')) done(buf.startsWith('+PONG'));
    });
  });
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

const isRedisProcess = (pid: number): boolean => commandOf(pid).includes('redis-server');
const isNodeProcess = (pid: number): boolean => /(^|\/)node\0/.test(commandOf(pid));

function readPid(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8').trim());
  } catch {
    return NaN;
  }
}

/**
 * A redis-server child process owned by Muninn, with its append-only file in the data folder. It runs in
 * its own process group, so Ctrl-C in the terminal reaches Muninn first and Muninn stops it after its
 * clients have closed. A server left behind by a crashed run is stopped at the next start.
 */
export class ManagedRedis {
  private child: ChildProcess | null = null;
  private port = 0;
  private readonly pidFile: string;
  /** The pid of the Muninn process that started the Redis of `pidFile`. */
  private readonly ownerFile: string;

  constructor(private readonly options: ManagedRedisOptions) {
    this.pidFile = path.join(options.dir, 'redis.pid');
    this.ownerFile = path.join(options.dir, 'redis.owner');
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<string> {
    const { dir, logger } = this.options;
    mkdirSync(dir, { recursive: true });
    await this.stopStale();
    this.port = this.options.port || (await freePort());
    const args = [
      '--port', String(this.port),
      '--bind', '127.0.0.1',
      '--dir', dir,
      '--appendonly', 'yes',
      '--appendfilename', 'muninn.aof',
      '--save', '',
      '--daemonize', 'no',
      '--protected-mode', 'yes',
      '--loglevel', 'warning',
    ];
    const output: string[] = [];
    const child = spawn(this.options.binary ?? 'redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    this.child = child;
    const collect = (d: Buffer) => {
      const text = d.toString().trim();
      if (text) {
        output.push(text);
        logger.debug({ redis: text }, 'managed redis output');
      }
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const failure = new Promise<never>((_, reject) => {
      child.once('error', (err: NodeJS.ErrnoException) => {
        reject(
          err.code === 'ENOENT'
            ? new ConfigError(`Redis is not available: "${this.options.binary ?? 'redis-server'}" was not found and REDIS_URL is not set. ${INSTALL_REDIS_HINT}`)
            : new ConfigError(`Cannot start the managed Redis: ${err.message}. ${INSTALL_REDIS_HINT}`),
        );
      });
      child.once('exit', (code) =>
        reject(new ConfigError(`The managed Redis exited with code ${code} before it was ready: ${output.join(' ').slice(0, 500)}. ${INSTALL_REDIS_HINT}`)),
      );
    });
    failure.catch(() => undefined);
    const deadline = Date.now() + (this.options.startTimeoutMs ?? 10_000);
    // Stops the readiness loop once the start failed, so a missing binary does not keep polling.
    let gaveUp = false;
    const ready = (async () => {
      while (!gaveUp && Date.now() < deadline) {
        if (await ping(this.port)) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      if (gaveUp) return;
      throw new ConfigError(`The managed Redis did not answer within ${this.options.startTimeoutMs ?? 10_000} ms. ${INSTALL_REDIS_HINT}`);
    })();
    try {
      await Promise.race([ready, failure]);
    } catch (err) {
      gaveUp = true;
      child.kill('SIGKILL');
      this.child = null;
      throw err;
    }
    child.removeAllListeners('exit');
    child.on('exit', (code, signal) => {
      if (this.child === child) logger.error({ code, signal }, 'the managed Redis stopped unexpectedly');
    });
    writeFileSync(this.pidFile, String(child.pid));
    writeFileSync(this.ownerFile, String(process.pid));
    // However this process ends (a second signal exits at once, an uncaught error), its Redis goes too.
    process.once('exit', this.stopOnExit);
    logger.info({ port: this.port, dir }, 'started managed Redis');
    return this.url;
  }

  /** Stops the server (SIGTERM lets it flush the append-only file), then SIGKILL after 5 s. */
  async stop(): Promise<void> {
    const child = this.child;
    process.off('exit', this.stopOnExit);
    if (!child || child.exitCode !== null) return;
    this.child = null;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    rmSync(this.pidFile, { force: true });
    rmSync(this.ownerFile, { force: true });
    this.options.logger.info('stopped managed Redis');
  }

  private readonly stopOnExit = (): void => {
    if (this.child && this.child.exitCode === null) this.child.kill('SIGTERM');
  };

  private async stopStale(): Promise<void> {
    if (!existsSync(this.pidFile)) return;
    const pid = readPid(this.pidFile);
    const owner = readPid(this.ownerFile);
    // A Redis whose Muninn still runs was not left behind: a second server on the same data folder would
    // take it from the first one. Refuse instead.
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isNodeProcess(owner) && Number.isInteger(pid) && pid > 0 && isRedisProcess(pid)) {
      throw new ConfigError(
        `Another Muninn server (pid ${owner}) is running on this data folder (${path.dirname(this.options.dir)}) with its managed Redis. ` +
          `Stop it first (kill -TERM ${owner}), or give this one its own data_dir.`,
      );
    }
    rmSync(this.pidFile, { force: true });
    rmSync(this.ownerFile, { force: true });
    if (!Number.isInteger(pid) || pid <= 0 || !isRedisProcess(pid)) return;
    this.options.logger.warn({ pid }, 'stopping a managed Redis left behind by an earlier run');
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 100 && isRedisProcess(pid); i++) await new Promise((r) => setTimeout(r, 50));
  }
}
