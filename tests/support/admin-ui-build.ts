import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');
const ui = path.join(root, 'admin-ui');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const m = statSync(path.join(dir, entry)).mtimeMs;
    if (m > newest) newest = m;
  }
  return newest;
}

/**
 * Builds the admin UI (vite) when `admin-ui/dist` is missing or older than its sources, so browser tests
 * run against the current code in a fresh clone. Runs once per jest run (global setup).
 */
export function ensureAdminUiBuilt(): void {
  const index = path.join(ui, 'dist', 'index.html');
  const sources = Math.max(newestMtime(path.join(ui, 'src')), statSync(path.join(ui, 'index.html')).mtimeMs, statSync(path.join(ui, 'vite.config.ts')).mtimeMs);
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return;
  try {
    execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '--silent', 'build', '-w', '@muninn/admin-ui'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  } catch (err) {
    // Only the browser tests need the build; they fail on their own (503 at /admin) with this hint.
    console.error(`Building the admin UI failed (run \`npm ci\`, then \`npm run build:admin\`): ${(err as Error).message}`);
  }
}
