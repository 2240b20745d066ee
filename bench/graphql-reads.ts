/**
 * `npm run bench:graphql-reads [-- --quick] [-- --cpu-prof[=dir]] [-- --c=10,50] [-- --q=0,2] [-- --seconds=5]`: only the GraphQL reads of
 * the chat benchmark (`__typename`, `me`, `sessions(first: 20)`) against the real server, so their
 * per-request cost can be profiled and iterated on without the turn benchmarks before them. `--q` picks
 * queries by index, `--c` the connection counts. It prints the server's CPU time per request, which stays
 * meaningful on a busy machine when req/s does not. `BENCH_PRELOAD=<file>` preloads a module into the
 * server (`node -r`), e.g. a statement timer.
 */
import 'reflect-metadata';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { FakeOpenAIServer } from '../tests/support/fakes/fake-openai-server';
import { modelConfig } from './chat.bench';
import { createUsers } from './support/chat';
import { HttpClient } from './support/http-client';
import { BenchServer } from './support/server';
import { closedLoop, fmt, now, sleep, summarize } from './support/stats';

export const GRAPHQL_READS: Array<[string, string]> = [
  ['{ __typename }', '{ __typename }'],
  ['{ me { id } }', '{ me { id } }'],
  ['sessions(first: 20) with user', '{ sessions(first: 20) { totalCount edges { node { id key status messageCount lastActivityAt user { id displayName trust } } } } }'],
];

/** CPU time (user + system) the process has used, ms; the cost per request whatever else runs on the machine. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function main(argv: string[]): Promise<void> {
  const quick = argv.includes('--quick');
  const prof = argv.find((a) => a.startsWith('--cpu-prof'));
  const cpuProfDir = prof ? path.resolve(prof.includes('=') ? prof.split('=')[1]! : 'bench-profiles') : null;
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
  const conc = (argv.find((a) => a.startsWith('--c='))?.slice(4) ?? '10,50').split(',').map(Number);
  const picked = argv.find((a) => a.startsWith('--q='))?.slice(4).split(',').map(Number);
  const reads = picked ? GRAPHQL_READS.filter((_, i) => picked.includes(i)) : GRAPHQL_READS;
  const seconds = Number(argv.find((a) => a.startsWith('--seconds='))?.slice(10) ?? (quick ? 1 : 5));
  const model = await FakeOpenAIServer.start({ chunks: 3 });
  const preload = process.env.BENCH_PRELOAD ? [process.env.BENCH_PRELOAD] : [];
  const server = await BenchServer.start({ config: modelConfig(model), cpuProfDir, preload });
  const http = new HttpClient(server.url, 64);
  try {
    // 50 users with one web session each (a slash command creates it without a model call).
    const users = await createUsers(http, server.ownerToken, 50);
    for (const u of users) await http.gql(`mutation { sendMessage(input: { text: "/whoami" }) { sessionId } }`, undefined, u.token);
    const headers = { authorization: `Bearer ${server.ownerToken}` };
    const idle0 = cpuMs(server.pid);
    await sleep(2000);
    console.log(`(server CPU while idle: ${fmt((cpuMs(server.pid) - idle0) / 2, 0)} ms/s)`);
    console.log(`(reads start ${((now() - server.spawnedAt) / 1000).toFixed(1)} s after spawn)`);
    for (const c of conc) {
      for (const [name, query] of reads) {
        const body = JSON.stringify({ query });
        const check = await http.post('/graphql', body, headers);
        if (check.status !== 200 || check.body.includes('"errors"')) throw new Error(`${name}: ${check.body.slice(0, 300)}`);
        await closedLoop(c, { count: 200 }, async () => void (await http.post('/graphql', body, headers)));
        const cpu0 = cpuMs(server.pid);
        const r = await closedLoop(c, { durationMs: seconds * 1000 }, async () => void (await http.post('/graphql', body, headers)));
        const s = summarize(r.latencies);
        const rate = (r.latencies.length / r.wallMs) * 1000;
        const cpuPerReq = ((cpuMs(server.pid) - cpu0) / r.latencies.length) * 1000;
        console.log(`${`${name}, c=${c}`.padEnd(40)} ${fmt(rate, 0).padStart(6)} req/s  p50 ${fmt(s.p50, 2)} ms  p99 ${fmt(s.p99, 2)} ms  server CPU ${fmt(cpuPerReq, 0)} µs/req`);
      }
    }
  } finally {
    http.close();
    await server.stop();
    await model.close();
  }
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
