import { FakeOpenAIServer } from '../tests/support/fakes/fake-openai-server';
import type { BenchContext } from './support/context';
import { ChatSession, createUsers } from './support/chat';
import { bullmqFloor, fakeModelFloor, httpFloor, sqliteTurnFloor } from './support/floors';
import { HttpClient } from './support/http-client';
import { BenchServer } from './support/server';
import { closedLoop, median, summarize } from './support/stats';

export function modelConfig(model: FakeOpenAIServer, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 32768, max_concurrency: 16 } }, ...extra } };
}

/**
 * Turn latency (1 session), throughput and fairness (10 and 50 sessions, closed loop), first delta, GraphQL
 * reads, the prompt prefix across two turns, RSS after the turns — all against one real server.
 */
export async function chatBench(b: BenchContext): Promise<void> {
  const { results, quick } = b;
  const model = await FakeOpenAIServer.start({ chunks: 3 });
  const server = await BenchServer.start({ config: modelConfig(model), cpuProfDir: b.cpuProfDir });
  const http = new HttpClient(server.url, 64);
  const sessions: ChatSession[] = [];
  try {
    // --- floors of this run
    const floorHttp1 = await httpFloor(1, quick ? 1000 : 3000);
    results.floor('http c=1', floorHttp1);
    const floorBull = await bullmqFloor(quick ? 200 : 1000);
    results.floor('bullmq job round trip', floorBull);
    const floorSql = sqliteTurnFloor(quick ? 500 : 3000);
    results.floor('sqlite writes of a turn', floorSql);
    const floorModel = await fakeModelFloor(model, quick ? 100 : 500);
    results.floor('fake model direct', floorModel);
    const turnFloor = floorHttp1.latency.p50 + floorBull.latency.p50 + floorSql.latency.p50 + floorModel.latency.p50;
    results.floor('turn floor (sum of the four p50)', { latency: summarize([turnFloor]) });

    const users = await createUsers(http, server.ownerToken, 50);
    for (const u of users) {
      const s = new ChatSession(http, server.url, u.token);
      await s.open();
      sessions.push(s);
    }

    // --- 1 session
    const one = sessions[0]!;
    for (let i = 0; i < 10; i++) await one.turn(`warm up ${i}`);
    const timings = [];
    for (let i = 0; i < (quick ? 40 : 400); i++) timings.push(await one.turn(`hello number ${i}`));
    const lat = summarize(timings.map((t) => t.totalMs));
    results.add({ benchmark: 'turn overhead, 1 session', latency: lat, floor: { name: 'turn floor', p50: turnFloor }, target: 'p50 ≤ 8 ms, p99 ≤ 25 ms', meets: lat.p50 <= 8 && lat.p99 <= 25 });
    const first = summarize(timings.map((t) => t.firstDeltaMs ?? NaN).filter((x) => !Number.isNaN(x)));
    results.add({ benchmark: 'first delta (sendMessage → first ReplyDelta)', latency: first, floor: { name: 'fake model direct', p50: floorModel.latency.p50 }, target: 'p50 ≤ 2 ms, p99 ≤ 8 ms', meets: first.p50 <= 2 && first.p99 <= 8 });

    // --- prompt prefix across two turns of a session
    model.reset();
    await one.turn('prefix probe one');
    await new Promise((r) => setTimeout(r, 1100));
    await one.turn('prefix probe two');
    results.add(promptPrefixRow(model));

    // --- 10 and 50 sessions, closed loop
    let turnsDone = 10 + timings.length + 2;
    for (const n of [10, 50]) {
      const group = sessions.slice(0, n);
      const limit = n === 50 && !quick ? { count: 3000 } : { durationMs: quick ? 2000 : 15_000 };
      const r = await closedLoop(n, limit, async (l, it) => void (await group[l]!.turn(`load ${n} ${it}`)));
      turnsDone += r.latencies.length;
      const s = summarize(r.latencies);
      const medians = r.perLoop.filter((p) => p.length).map(median);
      const spread = Math.max(...medians) / Math.min(...medians);
      const counts = r.perLoop.map((p) => p.length);
      const throughput = (r.latencies.length / r.wallMs) * 1000;
      results.add({
        benchmark: `turns, ${n} sessions (closed loop)`,
        latency: s,
        throughput,
        floor: { name: 'turn floor', p50: turnFloor },
        target: n === 50 ? '≥ 300 turns/s, p99 ≤ 250 ms, per-session medians within 2×' : 'reported',
        meets: n === 50 ? throughput >= 300 && s.p99 <= 250 && spread <= 2 : null,
        note: `per-session medians ${Math.min(...medians).toFixed(0)}–${Math.max(...medians).toFixed(0)} ms (×${spread.toFixed(2)}), turns per session ${Math.min(...counts)}–${Math.max(...counts)}`,
        extra: { perSessionMedians: medians, perSessionCounts: counts },
      });
    }
    const rss = server.rss();
    results.add({ benchmark: `RSS after ${turnsDone} turns (50 sessions)`, value: { figure: rss.total, unit: 'MiB' }, target: '≤ 250 MiB', meets: rss.total <= 250, note: `node ${rss.node.toFixed(0)} MiB + children ${rss.children.toFixed(0)} MiB (Redis is shared, not counted)` });

    // --- GraphQL reads
    const owner = server.ownerToken;
    const queries: Array<[string, string, string, (rate: number, p99: number) => boolean]> = [
      ['{ __typename }', '{ __typename }', 'reported', () => true],
      ['{ me { id } }', '{ me { id } }', '≥ 4000 req/s', (rate) => rate >= 4000],
      [
        'sessions(first: 20) with user',
        '{ sessions(first: 20) { totalCount edges { node { id key status messageCount lastActivityAt user { id displayName trust } } } } }',
        '≥ 2500 req/s, p99 ≤ 15 ms',
        (rate, p99) => rate >= 2500 && p99 <= 15,
      ],
    ];
    for (const c of [10, 50]) {
      const floor = await httpFloor(c, quick ? 700 : 4000);
      results.floor(`http c=${c}`, floor);
      for (const [name, query, target, ok] of queries) {
        const body = JSON.stringify({ query });
        const headers = { authorization: `Bearer ${owner}` };
        const check = await http.post('/graphql', body, headers);
        if (check.status !== 200 || check.body.includes('"errors"')) throw new Error(`${name}: ${check.body.slice(0, 300)}`);
        await closedLoop(c, { count: 200 }, async () => void (await http.post('/graphql', body, headers)));
        const r = await closedLoop(c, { durationMs: quick ? 1000 : 6000 }, async () => void (await http.post('/graphql', body, headers)));
        const s = summarize(r.latencies);
        const rate = (r.latencies.length / r.wallMs) * 1000;
        results.add({
          benchmark: `GraphQL ${name}, c=${c}`,
          latency: s,
          throughput: rate,
          floor: { name: `http c=${c}`, throughput: floor.throughput },
          target: c === 10 ? target : 'reported',
          meets: c === 10 && target !== 'reported' ? ok(rate, s.p99) : null,
        });
      }
    }
  } finally {
    for (const s of sessions) await s.close();
    http.close();
    const stopMs = await server.stop();
    console.log(`  (chat server stopped in ${stopMs.toFixed(0)} ms)`);
    await model.close();
  }
}

/** Whether the second turn's prompt starts with the first turn's prompt, byte for byte. */
function promptPrefixRow(model: FakeOpenAIServer) {
  const lastUser = (r: { body: { messages?: Array<{ role: string; content: unknown }> } | null }) =>
    [...(r.body?.messages ?? [])].reverse().find((m) => m.role === 'user')?.content;
  const reqs = model.chatRequests();
  const a = reqs.find((r) => JSON.stringify(lastUser(r) ?? '').includes('prefix probe one'));
  const b = reqs.find((r) => JSON.stringify(lastUser(r) ?? '').includes('prefix probe two'));
  if (!a || !b) return { benchmark: 'prompt prefix across two turns', value: { figure: 'no requests seen', unit: '' }, target: 'byte-identical up to the new messages', meets: false };
  const msgsA = a.body!.messages!;
  // The part of the first prompt that the second must repeat: everything before the first turn's user message.
  const stable = JSON.stringify(msgsA.slice(0, -1));
  const jb = JSON.stringify(b.body!.messages!.slice(0, msgsA.length - 1));
  let i = 0;
  while (i < stable.length && stable[i] === jb[i]) i++;
  const same = i === stable.length && jb.length === stable.length;
  return {
    benchmark: 'prompt prefix across two turns',
    value: { figure: same ? 'identical' : `differs at byte ${i} of ${stable.length}`, unit: '' },
    target: 'byte-identical up to the new messages',
    meets: same,
    note: same ? undefined : `first: …${JSON.stringify(stable.slice(Math.max(0, i - 30), i + 40))} second: …${JSON.stringify(jb.slice(Math.max(0, i - 30), i + 40))}`,
  };
}
