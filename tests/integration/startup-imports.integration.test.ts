/**
 * What the server's modules load when `muninn serve` starts, before any configuration asks for more:
 * packages a configuration may never use (the MCP SDK, class-validator's full index with libphonenumber,
 * Baileys, LanceDB, the tokenizer tables, the OpenAI SDK, Telegram, PostgreSQL, document parsers, tar for
 * backups and exports, the rate limiter back-ends other than Redis) are required where they are first
 * used, so start-up and idle memory do not pay for them. A static import of
 * one of them in a module on the start-up path makes this fail. Node's process metrics (prom-client's index and
 * @opentelemetry/api) are not loaded either: they start once the server is ready.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

jest.setTimeout(120_000);

const ROOT = path.join(__dirname, '..', '..');

const NOT_AT_START = [
  '@modelcontextprotocol/sdk',
  'libphonenumber-js',
  'class-validator/cjs/index.js',
  'validator/index.js',
  '@whiskeysockets/baileys',
  '@lancedb/lancedb',
  'gpt-tokenizer',
  'openai',
  'grammy',
  'pg',
  'mammoth',
  'pdfjs-dist',
  'tar',
  // The index of every back-end; the Redis limiter is required by its own path (server/common/redis-rate-limiter.ts).
  'rate-limiter-flexible/index.js',
  // prom-client's default metrics (and its index, which loads them) start after ready (PromMetrics.collectProcessMetrics).
  '@opentelemetry/api',
  'prom-client/index.js',
];

it('requiring the CLI, the app and the composition root loads none of the packages used on demand', () => {
  const script = [
    "require('reflect-metadata');",
    "require('./server/cli/main.ts');",
    "require('./server/app.ts');",
    "require('./server/composition/chat-services.ts');",
    "require('./server/composition/chat-workers.ts');",
    'process.stdout.write(JSON.stringify(Object.keys(require.cache)));',
  ].join('\n');
  const out = execFileSync(process.execPath, ['-r', path.join(ROOT, 'tests/support/swc-register.js'), '-e', script], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const loaded = JSON.parse(out) as string[];
  expect(loaded.some((f) => f.includes(`${path.sep}server${path.sep}app.ts`))).toBe(true);
  const found = NOT_AT_START.filter((pkg) => loaded.some((f) => f.includes(`node_modules/${pkg}${pkg.endsWith('.js') ? '' : '/'}`)));
  expect(found).toEqual([]);
});
