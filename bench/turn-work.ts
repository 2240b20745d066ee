/**
 * `npm run bench:turn-work [-- --turns=100] [-- --steady=300] [-- --cpu-prof[=dir]]`: what one web turn costs the server, counted rather than
 * timed (timings on a shared machine are noisy): SQL statements (by statement), Redis commands (by
 * command, from MONITOR on a private redis-server started here), and the server's CPU time per turn.
 * One session, turns back to back after a warm-up, against the fake model; needs `redis-server` on PATH.
 * With `--cpu-prof` the server writes a V8 CPU profile, summarised here for the timed turns only.
 * Then, after `--steady` more turns, the CPU of as many turns again in steady state: in its first few hundred
 * turns V8 still compiles the hot path on background threads, CPU the process pays once, not per turn.
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { FakeOpenAIServer } from '../tests/support/fakes/fake-openai-server';
import { modelConfig } from './chat.bench';
import { ChatSession, createUsers } from './support/chat';
import { HttpClient } from './support/http-client';
import { BenchServer } from './support/server';
import { newestProfile, summarizeProfile } from './support/profile-summary';
import { now, sleep, summarize } from './support/stats';

/** BullMQ's scripts by the first 8 hex digits of their SHA1 (EVALSHA), for readable output. */
function scriptNames(): Map<string, string> {
  const names = new Map<string, string>();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const scripts = require('bullmq/dist/cjs/scripts') as Record<string, { name?: string; content?: string }>;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createHash } = require('node:crypto') as typeof import('node:crypto');
  for (const s of Object.values(scripts)) if (s?.content && s.name) names.set(createHash('sha1').update(s.content).digest('hex').slice(0, 8), s.name);
  return names;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** user + system CPU time of a process, ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function readCounts(file: string): Map<string, number> {
  return existsSync(file) ? new Map(JSON.parse(readFileSync(file, 'utf8')) as Array<[string, number]>) : new Map();
}

async function main(argv: string[]): Promise<void> {
  const turns = Number(argv.find((a) => a.startsWith('--turns='))?.slice(8) ?? 100);
  const steady = Number(argv.find((a) => a.startsWith('--steady='))?.slice(9) ?? 300);
  const prof = argv.find((a) => a.startsWith('--cpu-prof'));
  const profDir = prof ? path.resolve(prof.includes('=') ? prof.split('=')[1]! : 'bench-profiles') : null;
  const port = await freePort();
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  // Interrupted (Ctrl-C, a kill): the redis-server and the server started here go too, not left running.
  let serverPid: number | null = null;
  const interrupted = () => {
    redis.kill('SIGTERM');
    if (serverPid !== null) process.kill(serverPid, 'SIGTERM');
    process.exit(130);
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  await sleep(300);
  const countFile = path.join(os.tmpdir(), `muninn-sql-counts-${process.pid}.json`);
  const model = await FakeOpenAIServer.start({ chunks: 3 });
  const server = await BenchServer.start({
    config: modelConfig(model),
    redisUrl: `redis://127.0.0.1:${port}`,
    preload: [path.join(__dirname, 'support/sql-counter.js')],
    env: { MUNINN_SQL_COUNT_FILE: countFile, ...(process.env.MUNINN_SQL_COUNT_STACKS ? { MUNINN_SQL_COUNT_STACKS: '1' } : {}) },
    cpuProfDir: profDir,
  });
  serverPid = server.pid;
  const http = new HttpClient(server.url, 4);
  const [user] = await createUsers(http, server.ownerToken, 1);
  const session = new ChatSession(http, server.url, user!.token);
  const monitor = net.connect(port, '127.0.0.1');
  try {
    await session.open();
    for (let i = 0; i < 10; i++) await session.turn(`warm up ${i}`);
    await sleep(1000);
    let monitored = '';
    monitor.on('data', (d: Buffer) => (monitored += d.toString('utf8')));
    monitor.write('MONITOR\r\n');
    await sleep(300);
    const sqlBefore = readCounts(countFile);
    const cpu0 = cpuMs(server.pid);
    const timedFrom = now() - server.spawnedAt;
    const timings = [];
    for (let i = 0; i < turns; i++) timings.push(await session.turn(`hello number ${i}`));
    const cpu1 = cpuMs(server.pid);
    const timedUntil = now() - server.spawnedAt;
    await sleep(500);
    monitor.end();
    if (process.env.BENCH_MONITOR_DUMP) (await import('node:fs')).writeFileSync(process.env.BENCH_MONITOR_DUMP, monitored);
    const sql = new Map<string, number>();
    for (const [k, v] of readCounts(countFile)) if (v - (sqlBefore.get(k) ?? 0) > 0) sql.set(k, v - (sqlBefore.get(k) ?? 0));
    const sqlTotal = [...sql.values()].reduce((a, b) => a + b, 0);
    const names = scriptNames();
    const commands = new Map<string, number>();
    let client = 0;
    let inScripts = 0;
    for (const line of monitored.split('\n')) {
      const m = /^\+[\d.]+ \[\d+ ([^\]]+)\] "(\w+)"(?: "([^"]*)")?/.exec(line);
      if (!m) continue;
      if (m[1] === 'lua') {
        inScripts++;
        continue;
      }
      client++;
      let name = m[2]!.toUpperCase();
      if (name === 'EVALSHA') name += ` ${names.get(m[3]!.slice(0, 8)) ?? m[3]!.slice(0, 8)}`;
      commands.set(name, (commands.get(name) ?? 0) + 1);
    }
    const per = (n: number) => (n / turns).toFixed(2);
    const lat = summarize(timings.map((t) => t.totalMs));
    console.log(`${turns} turns, one session: p50 ${lat.p50.toFixed(1)} ms, p99 ${lat.p99.toFixed(1)} ms; server CPU ${per(cpu1 - cpu0)} ms per turn`);
    console.log(`SQL statements per turn: ${per(sqlTotal)}`);
    for (const [k, v] of [...sql.entries()].sort((a, b) => b[1] - a[1])) console.log(`  ${per(v).padStart(6)}  ${k.slice(0, 150)}`);
    console.log(`Redis commands per turn: ${per(client)} sent by the server (+ ${per(inScripts)} run inside scripts)`);
    for (const [k, v] of [...commands.entries()].sort((a, b) => b[1] - a[1])) console.log(`  ${per(v).padStart(6)}  ${k}`);
    if (steady > 0) {
      for (let i = 0; i < steady; i++) await session.turn(`more ${i}`);
      const cpu2 = cpuMs(server.pid);
      const later = [];
      for (let i = 0; i < turns; i++) later.push(await session.turn(`steady ${i}`));
      const cpu3 = cpuMs(server.pid);
      const l = summarize(later.map((t) => t.totalMs));
      console.log(`steady state (${turns} turns after ${steady} more): p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms; server CPU ${per(cpu3 - cpu2)} ms per turn`);
    }
    if (profDir) {
      await session.close();
      await server.stop();
      const file = newestProfile(profDir);
      if (file) console.log(`CPU profile of the timed turns (${file}):\n${summarizeProfile(file, timedFrom, timedUntil)}`);
    }
  } finally {
    monitor.destroy();
    await session.close();
    http.close();
    await server.stop();
    await model.close();
    redis.kill('SIGTERM');
    rmSync(countFile, { force: true });
  }
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
