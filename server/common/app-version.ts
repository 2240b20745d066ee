import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The server's version: `version` of the nearest package.json named `muninn` above this file (sources or `dist/`). */
export function appVersion(from = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'muninn' && pkg.version) return pkg.version;
      } catch {
        // An unreadable package.json on the way up is not ours.
      }
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}
