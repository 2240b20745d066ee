import { existsSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Stops the throw-away Redis that global-setup started, if any. */
export default async function globalTeardown(): Promise<void> {
  const pidFile = path.join(os.tmpdir(), 'muninn-test-redis.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  rmSync(pidFile, { force: true });
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // already gone
  }
}
