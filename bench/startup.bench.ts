import { FakeOpenAIServer } from '../tests/support/fakes/fake-openai-server';
import { modelConfig } from './chat.bench';
import { ChatSession } from './support/chat';
import type { BenchContext } from './support/context';
import { HttpClient } from './support/http-client';
import { BenchServer, ensureBuilt } from './support/server';
import { sleep, summarize } from './support/stats';

/**
 * Start to /readyz and idle RSS the way the README starts it (`npm start`: the built CLI, own data folder,
 * managed Redis); shutdown time after turns. Its note gives the server's CPU time until ready.
 */
export async function startupBench(b: BenchContext): Promise<void> {
  ensureBuilt();
  const model = await FakeOpenAIServer.start({ chunks: 3 });
  const ready: number[] = [];
  const readyCpu: number[] = [];
  const idle: number[] = [];
  const stops: number[] = [];
  try {
    for (let i = 0; i < (b.quick ? 1 : 5); i++) {
      const server = await BenchServer.start({ config: modelConfig(model), managedRedis: true, built: true, cpuProfDir: b.cpuProfDir });
      ready.push(server.readyMs);
      if (server.readyCpuMs !== null) readyCpu.push(server.readyCpuMs);
      await sleep(1500);
      idle.push(server.rss().total);
      if (i === 0) {
        // A few turns, then stop: shutdown must not wait for background work (jobs stay queued).
        const http = new HttpClient(server.url, 2);
        const chat = new ChatSession(http, server.url, server.ownerToken);
        await chat.open();
        for (let k = 0; k < 10; k++) await chat.turn(`before shutdown ${k}`);
        await chat.close();
        http.close();
      }
      stops.push(await server.stop());
    }
    const r = summarize(ready);
    // The server's own CPU until ready does not grow with the machine's load as the wall time does.
    const cpu = readyCpu.length ? `server CPU until ready: p50 ${summarize(readyCpu).p50.toFixed(0)} ms` : undefined;
    b.results.add({ benchmark: 'start to /readyz (managed Redis)', latency: r, target: '≤ 0.8 s', meets: r.p50 <= 800, note: cpu });
    const rss = summarize(idle);
    b.results.add({ benchmark: 'idle RSS (node + managed redis)', value: { figure: rss.p50, unit: 'MiB' }, target: '≤ 120 MiB', meets: rss.p50 <= 120 });
    b.results.add({ benchmark: 'shutdown after 10 turns (SIGTERM → exit)', value: { figure: stops[0]!, unit: 'ms' }, target: '≤ 1 s', meets: stops[0]! <= 1000, note: `idle shutdowns: ${stops.slice(1).map((s) => s.toFixed(0)).join(', ')} ms` });
  } finally {
    await model.close();
  }
}
