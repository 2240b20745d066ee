import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { now, sleep } from './stats';

const ROOT = path.resolve(__dirname, '../..');
const REGISTER = path.join(ROOT, 'bench/support/swc-cache-register.js');
const ENTRY = path.join(ROOT, 'tests/support/cli-process.ts');
const BUILT_ENTRY = path.join(ROOT, 'bin/muninn.js');
export const LOCAL_REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface BenchServerOptions {
  /** Raw muninn.json (merged over the bench defaults). */
  config?: Record<string, unknown>;
  /** true: the server starts its own redis-server (as in the README); false: a unique prefix on LOCAL_REDIS. */
  managedRedis?: boolean;
  /** Reuse a data folder (e.g. one pre-filled with memories). */
  dataDir?: string;
  /** Write a V8 CPU profile of the server into this folder on exit. */
  cpuProfDir?: string | null;
  /** Redis of the server when not managed. @default LOCAL_REDIS */
  redisUrl?: string;
  /** Modules the server process requires first (`node -r`), e.g. a statement counter. */
  preload?: string[];
  /** Extra environment of the server process. */
  env?: Record<string, string>;
  /**
   * true: the built CLI as `npm start` runs it (bin/muninn.js with dist/muninn.bundle.js; call ensureBuilt()
   * first); false: the TypeScript sources through swc (no build needed).
   */
  built?: boolean;
}

/** Rebuilds dist/ (npm run build:server) when the server's sources changed since the last build. */
export function ensureBuilt(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { buildIfStale } = require(path.join(ROOT, 'bin/build-if-stale.js')) as { buildIfStale: (quiet: boolean, only?: string[]) => void };
  buildIfStale(true, ['server']);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** VmRSS of a process in MiB, 0 when it is gone. */
export function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** CPU time (user + system) a process has used so far, ms; null when it is gone. */
export function cpuMs(pid: number): number | null {
  try {
    // Fields after the command name: state is the 1st, utime the 12th and stime the 13th (clock ticks).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}
/** USER_HZ, 100 on Linux for every architecture Node runs on. */
const CLOCK_TICKS = 100;

function childPids(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    /* gone */
  }
  return out;
}

/** The real server (`muninn serve` from the sources) in its own process and data folder. */
export class BenchServer {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
    readonly dataDir: string,
    readonly prefix: string | null,
    readonly spawnedAt: number,
    private readonly ownsDataDir: boolean,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.stdout!.setEncoding('utf8').on('data', (t: string) => {
      if (this.stdout.length < 200_000) this.stdout += t;
    });
    child.stderr!.setEncoding('utf8').on('data', (t: string) => {
      if (this.stderr.length < 200_000) this.stderr += t;
    });
  }

  static newDataDir(): string {
    return mkdtempSync(path.join(os.tmpdir(), 'muninn-bench-'));
  }

  /** CPU time of the server process when /readyz first answered 200, ms (null without /proc). */
  readyCpuMs: number | null = null;

  static async start(options: BenchServerOptions = {}): Promise<BenchServer & { readyMs: number }> {
    const dataDir = options.dataDir ?? BenchServer.newDataDir();
    const port = await freePort();
    const prefix = options.managedRedis ? null : `bench-${randomBytes(4).toString('hex')}`;
    const config = {
      ...options.config,
      server: { host: '127.0.0.1', port, ...(options.config?.server as object) },
      redis: prefix ? { url: options.redisUrl ?? LOCAL_REDIS, prefix } : {},
    };
    const configFile = path.join(dataDir, 'muninn.json');
    writeFileSync(configFile, JSON.stringify(config, null, 2));
    const nodeArgs = [...(options.built ? [] : ['-r', REGISTER]), ...(options.preload ?? []).flatMap((m) => ['-r', m])];
    if (options.cpuProfDir) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`);
    const spawnedAt = now();
    const child = spawn(process.execPath, [...nodeArgs, options.built ? BUILT_ENTRY : ENTRY, 'serve'], {
      cwd: dataDir,
      env: { PATH: process.env.PATH, HOME: dataDir, MUNINN_CONFIG: configFile, MUNINN_DATA_DIR: dataDir, NODE_ENV: 'production', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new BenchServer(child, `http://127.0.0.1:${port}`, dataDir, options.redisUrl ? null : prefix, spawnedAt, !options.dataDir);
    const readyMs = await server.waitReady();
    return Object.assign(server, { readyMs });
  }

  /** Polls /readyz every 10 ms; returns the time from spawn to the first 200. */
  private async waitReady(timeoutMs = 60_000): Promise<number> {
    const deadline = now() + timeoutMs;
    while (now() < deadline) {
      if (this.child.exitCode !== null) throw new Error(`server exited (${this.child.exitCode}): ${this.stderr.slice(-2000)}${this.stdout.slice(-2000)}`);
      try {
        const res = await fetch(`${this.url}/readyz`);
        if (res.status === 200) {
          this.readyCpuMs = cpuMs(this.pid);
          return now() - this.spawnedAt;
        }
      } catch {
        /* not listening yet */
      }
      await sleep(10);
    }
    throw new Error(`server not ready after ${timeoutMs} ms: ${this.stdout.slice(-2000)}`);
  }

  get ownerToken(): string {
    return readFileSync(path.join(this.dataDir, 'owner.token'), 'utf8').trim();
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** RSS of the node process and of its children (the managed redis-server), MiB. */
  rss(): { node: number; children: number; total: number } {
    const node = rssMiB(this.pid);
    const children = childPids(this.pid).reduce((s, p) => s + rssMiB(p), 0);
    return { node, children, total: node + children };
  }

  /** SIGTERM; resolves with how long the process took to exit. */
  async stop(): Promise<number> {
    const t0 = now();
    if (this.child.exitCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
      await this.exited;
      clearTimeout(timer);
    }
    const took = now() - t0;
    if (this.prefix) await dropPrefix(this.prefix);
    if (this.ownsDataDir) rmSync(this.dataDir, { recursive: true, force: true });
    return took;
  }
}

/** Deletes every key of a bench prefix on the local Redis. */
export async function dropPrefix(prefix: string): Promise<void> {
  const redis = new Redis(LOCAL_REDIS, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
