/**
 * `npm run bench:steady -- [--turns=3000] [--sessions=20] [--memories=150]`: a steady load on one real
 * server (SQLite, the fake model) with memory search on every turn, for checking that a Node version holds
 * up (CI runs it on the newer Node it tests). Each session's user has memories, so every turn recalls
 * through the search threads; other clients call `searchMemories` alongside. It fails (exit 1) when the
 * server exits before it is stopped, a turn fails, or a search errors; the last line is
 * `N passed, N failed` for CI's totals.
 */
import { FakeOpenAIServer } from '../tests/support/fakes/fake-openai-server';
import { BenchServer } from './support/server';
import { HttpClient } from './support/http-client';
import { ChatSession, createUsers } from './support/chat';
import { closedLoop, fmt, summarize } from './support/stats';

const WORDS = ['garden', 'invoice', 'train', 'coffee', 'meeting', 'birthday', 'piano', 'tax', 'holiday', 'doctor', 'recipe', 'football'];

function arg(name: string, fallback: number): number {
  const m = process.argv.find((a) => a.startsWith(`--${name}=`));
  return m ? Number(m.split('=')[1]) : fallback;
}

async function main(): Promise<number> {
  const turns = arg('turns', 3000);
  const sessions = arg('sessions', 20);
  const memories = arg('memories', 150);
  const model = await FakeOpenAIServer.start();
  model.setDefault(() => ({ text: 'Noted.', chunks: 2 }));
  const server = await BenchServer.start({
    managedRedis: true,
    config: {
      ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 16 } } },
      session: { summarizer_mode: 'manual' },
      log: { level: 'warn' },
    },
  });
  let exitedEarly: number | null | undefined;
  void server.exited.then((code) => {
    exitedEarly ??= code;
  });
  const failures: string[] = [];
  const http = new HttpClient(server.url, sessions + 4);
  try {
    const users = await createUsers(http, server.ownerToken, Math.ceil(sessions / 2), 'steady');
    for (const [u, user] of users.entries()) {
      for (let i = 0; i < memories; i++) {
        const a = WORDS[(i + u) % WORDS.length]!;
        const b = WORDS[(i * 7 + u) % WORDS.length]!;
        await http.gql(`mutation($input: CreateMemoryInput!) { createMemory(input: $input) { id } }`, { input: { content: `Remember the ${a} and the ${b} plan number ${i}` } }, user.token);
      }
    }
    const chats = Array.from({ length: sessions }, (_, i) => new ChatSession(http, server.url, users[i % users.length]!.token));
    for (const chat of chats) await chat.open();
    let searches = 0;
    let searching = true;
    const searchLoop = (async () => {
      for (let i = 0; searching; i++) {
        const user = users[i % users.length]!;
        try {
          await http.gql(`query($q: String!) { searchMemories(query: $q, limit: 10) { score } }`, { q: `${WORDS[i % WORDS.length]} plan` }, user.token);
          searches++;
        } catch (err) {
          failures.push(`searchMemories: ${(err as Error).message}`);
          return;
        }
      }
    })();
    const started = Date.now();
    const run = await closedLoop(sessions, { count: turns }, async (loop, it) => {
      if (exitedEarly !== undefined) throw new Error(`server exited with ${exitedEarly}`);
      const timing = await chats[loop]!.turn(`What about the ${WORDS[(loop + it) % WORDS.length]} plan? (${it})`, 60_000);
      if (timing.status.toUpperCase() !== 'DONE') failures.push(`turn ${loop}/${it}: ${timing.status}`);
    }).catch((err: Error) => {
      failures.push(err.message);
      return null;
    });
    searching = false;
    await searchLoop;
    for (const chat of chats) await chat.close();
    if (run) {
      const s = summarize(run.latencies);
      console.log(`steady load on Node ${process.versions.node}: ${run.latencies.length} turns in ${fmt(run.wallMs / 1000)} s (${fmt((run.latencies.length * 1000) / run.wallMs)} turns/s), p50 ${fmt(s.p50)} ms, p99 ${fmt(s.p99)} ms; ${searches} searchMemories alongside; ${Math.round((Date.now() - started) / 1000)} s`);
      if (run.latencies.length < turns) failures.push(`only ${run.latencies.length} of ${turns} turns ran`);
    }
  } catch (err) {
    failures.push((err as Error).message);
  }
  if (exitedEarly !== undefined) failures.push(`the server exited during the load (code ${exitedEarly}): ${server.stderr.slice(-1500)}${server.stdout.slice(-1500)}`);
  const stopCode = exitedEarly === undefined ? await server.stop().then(async () => server.exited) : exitedEarly;
  if (exitedEarly === undefined && stopCode !== 0) failures.push(`the server exited with ${stopCode} on SIGTERM: ${server.stderr.slice(-1500)}`);
  await model.close();
  for (const f of failures.slice(0, 20)) console.log(`FAIL ${f}`);
  if (failures.length > 20) console.log(`FAIL … and ${failures.length - 20} more`);
  if (failures.length) console.log(`server exit: ${exitedEarly ?? stopCode}; its last output:\n${server.stderr.slice(-3000)}\n${server.stdout.slice(-3000)}`);
  console.log(`${failures.length ? 0 : 1} passed, ${failures.length ? 1 : 0} failed`);
  return failures.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    console.log('0 passed, 1 failed');
    process.exit(1);
  },
);
