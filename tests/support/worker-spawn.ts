import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { AppConfig } from '../../server/config';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Starts tests/support/worker-process.ts in a child process with `config` (and a recorder URL for the
 * `telegram` channel) and resolves once it prints "ready". Its stderr (the log) is kept for the error.
 */
export function spawnWorker(config: AppConfig, recorderUrl?: string, startTimeoutMs = 90_000): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-r', path.join(ROOT, 'tests/support/swc-register.js'), path.join(ROOT, 'tests/support/worker-process.ts')], {
    cwd: ROOT,
    env: { ...process.env, MUNINN_TEST_CONFIG: JSON.stringify(config), ...(recorderUrl ? { RECORDER_URL: recorderUrl } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr!.on('data', (d: Buffer) => (errors = (errors + d.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${errors.slice(-2000)}`)), startTimeoutMs);
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}: ${errors.slice(-2000)}`));
    });
  });
}

/** SIGKILLs a child and resolves when it is gone. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await gone;
}
