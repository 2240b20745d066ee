/**
 * The README's `npm start`, in a copy of the checkout (its own dist/ and admin-ui/dist/, node_modules
 * linked): the first start builds the server and the console, a second start builds nothing, a change to
 * the console's sources rebuilds the console only. A SIGTERM sent to npm alone (as docker and systemd do
 * to the main process) stops the server cleanly: npm exits 0, and neither the server nor its managed
 * Redis is left running.
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually } from '../../support/chat-helpers';
import { childEnv } from '../../support/serve-process';
import { pidAlive } from '../../support/pid-alive';

jest.setTimeout(600_000);

const ROOT = path.join(__dirname, '..', '..', '..');
const copy = mkdtempSync(path.join(os.tmpdir(), 'muninn-npm-start-'));
const dataDir = path.join(copy, 'data');
const started: number[] = [];

/** The tracked files a start needs (not the tests, benchmarks or docs), node_modules linked. */
function copyCheckout(): void {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    if (/^(tests|bench|docs|wip)\//.test(file) || !existsSync(path.join(ROOT, file))) continue;
    mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    copyFileSync(path.join(ROOT, file), path.join(copy, file));
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
  if (existsSync(path.join(ROOT, 'admin-ui', 'node_modules'))) {
    symlinkSync(path.join(ROOT, 'admin-ui', 'node_modules'), path.join(copy, 'admin-ui', 'node_modules'));
  }
}

interface Run {
  output: string;
  code: number | null;
  serverPid: number;
  redisPid: number;
}

/** `npm start` until /readyz answers 200, then one SIGTERM to npm. */
async function startAndStop(configFile: string): Promise<Run> {
  const npm = spawn('npm', ['start'], { cwd: copy, env: childEnv(configFile, 'production'), stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(npm.pid!);
  let output = '';
  for (const stream of [npm.stdout!, npm.stderr!]) stream.setEncoding('utf8').on('data', (d: string) => (output += d));
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  const url = await eventually(() => /Muninn is listening on (http:\/\/\S+)\/graphql/.exec(output)?.[1], 300_000, `npm start to listen; output: ${output.slice(-2000)}`);
  await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, 30_000, '/readyz');
  const serverPid = Number(readFileSync(path.join(dataDir, 'redis', 'redis.owner'), 'utf8'));
  const redisPid = Number(readFileSync(path.join(dataDir, 'redis', 'redis.pid'), 'utf8'));
  expect(pidAlive(serverPid)).toBe(true);
  expect(readFileSync(`/proc/${serverPid}/cmdline`, 'utf8')).toContain('bin/start.js');
  npm.kill('SIGTERM');
  const code = await exited;
  return { output, code, serverPid, redisPid };
}

beforeAll(() => copyCheckout());

afterAll(() => {
  for (const pid of started) if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
  const owner = path.join(dataDir, 'redis', 'redis.owner');
  if (existsSync(owner) && pidAlive(Number(readFileSync(owner, 'utf8')))) process.kill(Number(readFileSync(owner, 'utf8')), 'SIGKILL');
  const redis = path.join(dataDir, 'redis', 'redis.pid');
  if (existsSync(redis) && pidAlive(Number(readFileSync(redis, 'utf8')))) process.kill(Number(readFileSync(redis, 'utf8')), 'SIGKILL');
  rmSync(copy, { recursive: true, force: true });
});

it('builds on the first start, nothing on the second, only the console after a console change; one SIGTERM to npm stops everything', async () => {
  const configFile = path.join(copy, 'muninn.test.json');
  writeFileSync(configFile, JSON.stringify({ data_dir: dataDir, server: { host: '127.0.0.1', port: 0 }, log: { level: 'info' } }));

  const first = await startAndStop(configFile);
  expect(first.output).toContain('muninn: building the server…');
  expect(first.output).toContain('muninn: building the admin console…');
  expect(existsSync(path.join(copy, 'dist', 'server', 'cli', 'main.js'))).toBe(true);
  // The server ran from the one-file bundle the build writes next to dist/server (bin/bundle-server.js).
  expect(existsSync(path.join(copy, 'dist', 'muninn.bundle.js'))).toBe(true);
  expect(existsSync(path.join(copy, 'admin-ui', 'dist', 'index.html'))).toBe(true);
  expect(first.code).toBe(0);
  await eventually(() => !pidAlive(first.serverPid) && !pidAlive(first.redisPid), 10_000, 'the server and its Redis to stop');
  expect(first.output).toContain('stopped managed Redis');

  const second = await startAndStop(configFile);
  expect(second.output).toContain('muninn: server is up to date');
  expect(second.output).toContain('muninn: admin console is up to date');
  expect(second.output).not.toContain('building the');
  expect(second.code).toBe(0);
  await eventually(() => !pidAlive(second.serverPid) && !pidAlive(second.redisPid), 10_000, 'the server and its Redis to stop');

  // A console source changes (newer time): the console is rebuilt, the server is not.
  const source = path.join(copy, 'admin-ui', 'src', 'main.tsx');
  const later = new Date(Date.now() + 5_000);
  utimesSync(source, later, later);
  const third = await startAndStop(configFile);
  expect(third.output).toContain('muninn: server is up to date');
  expect(third.output).toContain('muninn: building the admin console…');
  expect(third.code).toBe(0);
  await eventually(() => !pidAlive(third.serverPid) && !pidAlive(third.redisPid), 10_000, 'the server and its Redis to stop');
});
