import path from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** The project's root (where package.json and swc.options.js are), from server/common. */
const ROOT = path.resolve(__dirname, '../..');

/**
 * Starts a worker thread on `<dir>/<name>.js` when the server runs compiled, or on `<dir>/<name>.ts` from the
 * TypeScript sources (jest, `npm run bench`): there the thread compiles them with the project's swc
 * settings, unless the process was started with a `.ts` loader (`node -r …`), which threads inherit.
 * `dir` is the caller's `__dirname`, which tells which of the two it is.
 */
export function startSourceWorker(dir: string, name: string, options: Omit<WorkerOptions, 'eval'> = {}): Worker {
  const compiled = path.extname(__filename) === '.js';
  const entry = path.join(dir, `${name}${compiled ? '.js' : '.ts'}`);
  if (compiled) return new Worker(entry, options);
  const bootstrap = [
    `if (!require.extensions['.ts']) {`,
    `  const fromRoot = require('node:module').createRequire(${JSON.stringify(path.join(ROOT, 'package.json'))});`,
    `  const { transformSync } = fromRoot('@swc/core');`,
    `  const options = fromRoot('./swc.options.js');`,
    `  const fs = require('node:fs');`,
    `  require.extensions['.ts'] = (module, filename) => module._compile(transformSync(fs.readFileSync(filename, 'utf8'), { ...options, filename }).code, filename);`,
    `}`,
    `require(${JSON.stringify(entry)});`,
  ].join('\n');
  return new Worker(bootstrap, { ...options, eval: true });
}
