import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/** A real `muninn serve --role …` process from the TypeScript sources, its logs parsed as they come. */
export interface ServeProcess {
  name: string;
  role: string;
  child: ChildProcess;
  /** Its HTTP base URL (GraphQL for api; health and metrics for worker). */
  url: string;
  /** Every log line (pino JSON, else raw text). */
  logs: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** Env of the child: the config file only, none of the variables that would override its keys. */
export function childEnv(configFile: string, nodeEnv = 'test'): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(MUNINN_|TELEGRAM_|WHATSAPP_)|^(DATABASE_URL|REDIS_URL|PORT|LOG_LEVEL)$/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, MUNINN_CONFIG: configFile, NODE_ENV: nodeEnv };
}

/** Starts `serve --role <role>` with `configFile`; resolves once it listens (api) or runs its workers (worker). */
export function startServeProcess(
  name: string,
  role: 'api' | 'worker' | 'all',
  configFile: string,
  timeoutMs = 90_000,
  /** NODE_ENV of the child (production turns on what production does, e.g. Apollo's defaults). @default 'test' */
  nodeEnv = 'test',
): Promise<ServeProcess> {
  const child = spawn(process.execPath, ['-r', path.join(ROOT, 'tests/support/swc-register.js'), path.join(ROOT, 'tests/support/cli-process.ts'), 'serve', '--role', role], {
    cwd: ROOT,
    env: childEnv(configFile, nodeEnv),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watchServe(child, name, role, timeoutMs);
}

/** A node process with the CLI's modules loaded that has not run `serve` yet (see warm-cli-process.ts). */
export interface WarmServeProcess {
  child: ChildProcess;
  /** Runs `serve --role <role>` in it; resolves like startServeProcess. */
  start(timeoutMs?: number): Promise<ServeProcess>;
  /** Ends it without ever starting (SIGKILL). */
  discard(): void;
}

/**
 * Spawns a process that loads the CLI's modules now and runs `muninn serve` only when start() is called,
 * for tests that restart the server many times: a restart then costs the server's own start-up (database,
 * managed Redis, workers), not loading node_modules from scratch.
 */
export function prepareServeProcess(name: string, role: 'api' | 'worker' | 'all', configFile: string): WarmServeProcess {
  const child = spawn(process.execPath, ['-r', path.join(ROOT, 'tests/support/swc-register.js'), path.join(ROOT, 'tests/support/warm-cli-process.ts'), 'serve', '--role', role], {
    cwd: ROOT,
    env: childEnv(configFile),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return {
    child,
    start: (timeoutMs = 90_000) => {
      const ready = watchServe(child, name, role, timeoutMs);
      child.stdin!.end('go\n');
      return ready;
    },
    discard: () => void child.kill('SIGKILL'),
  };
}

/** Parses the child's log lines; resolves once it listens (api) or runs its workers (worker). */
function watchServe(child: ChildProcess, name: string, role: string, timeoutMs: number): Promise<ServeProcess> {
  const logs: Array<Record<string, unknown>> = [];
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
  return new Promise((resolve, reject) => {
    let url: string | null = null;
    let workers = role === 'api';
    const timer = setTimeout(() => reject(new Error(`${name} did not start in ${timeoutMs} ms; last logs: ${JSON.stringify(logs.slice(-8))}`)), timeoutMs);
    const ready = () => {
      if (!url || !workers) return;
      clearTimeout(timer);
      resolve({
        name,
        role,
        child,
        url,
        logs,
        exited,
        kill: async (signal) => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
        },
      });
    };
    const onLine = (line: string) => {
      if (!line.trim()) return;
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        entry = { msg: line };
      }
      logs.push(entry);
      const msg = String(entry.msg ?? '');
      const m = /Muninn is listening on (http:\/\/\S+)\/graphql|health and metrics on (http:\/\/\S+)/.exec(msg);
      if (m) url = m[1] ?? m[2]!;
      if (msg === 'workers started') workers = true;
      ready();
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      let buffer = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffer += chunk;
        const lines = buffer.split('\n');
        buffer = lines.pop()!;
        lines.forEach(onLine);
      });
    }
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before it was ready; last logs: ${JSON.stringify(logs.slice(-8))}`));
    });
  });
}
