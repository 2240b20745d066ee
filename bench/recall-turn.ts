import { FakeOpenAIServer } from '../tests/support/fakes/fake-openai-server';
import { modelConfig } from './chat.bench';
import { ChatSession, createUsers } from './support/chat';
import type { BenchContext } from './support/context';
import type { Corpus } from './support/corpus';
import { HttpClient } from './support/http-client';
import { BenchServer } from './support/server';
import { now, summarize } from './support/stats';

/** The embedding model the bench server uses (its fake provider's default), which the corpus's vectors are stored under. */
export const SERVER_EMBEDDING_MODEL = 'fake/fake-model';

/**
 * Issue 29, "a turn with recall": web turns of a user with the corpus's memories (the small vocabulary, so
 * each message's words are in most of them) against the real server on that data folder, send →
 * TurnFinished with the instant fake model; the floor is the same turn of a user with no memories on the
 * same server. Each message is a corpus query, so recall searches both sides (keyword and vector).
 */
export async function recallTurnBench(b: BenchContext, dataDir: string, userId: string, corpus: Corpus): Promise<string> {
  const model = await FakeOpenAIServer.start({ chunks: 3, embeddingDimension: corpus.dims });
  const server = await BenchServer.start({ config: modelConfig(model), dataDir, cpuProfDir: b.cpuProfDir });
  const http = new HttpClient(server.url, 8);
  const sessions: ChatSession[] = [];
  try {
    const token = await http.gql<{ createApiToken: { token: string } }>(`mutation($n: String!, $u: ID!) { createApiToken(name: $n, userId: $u) { token } }`, { n: 'bench-recall', u: userId }, server.ownerToken);
    const [empty] = await createUsers(http, server.ownerToken, 1, 'no memories');
    const withMemories = new ChatSession(http, server.url, token.createApiToken.token);
    const without = new ChatSession(http, server.url, empty!.token);
    for (const s of [withMemories, without]) {
      await s.open();
      sessions.push(s);
    }
    const turns = b.quick ? 20 : 100;
    const texts = Array.from({ length: turns + 5 }, (_, i) => corpus.query(200 + i).text);
    for (const text of texts.slice(0, 5)) {
      await withMemories.turn(text);
      await without.turn(text);
    }
    const recall: number[] = [];
    const floor: number[] = [];
    for (const text of texts.slice(5)) {
      recall.push((await withMemories.turn(text)).totalMs);
      floor.push((await without.turn(text)).totalMs);
    }
    // Recall must have taken part: the model's prompts carry recalled memories (corpus texts end in "#<n>").
    const recalledPrompts = model.requests.filter((r) => r.path.endsWith('/chat/completions') && /#\d/.test(JSON.stringify(r.body))).length;
    if (!recalledPrompts) throw new Error('no prompt carried a recalled memory: the turn-with-recall row would measure nothing');
    const s = summarize(recall);
    b.results.add({
      benchmark: `turn with recall, small vocabulary, ${corpus.size / 1000}k memories × ${corpus.dims}`,
      latency: s,
      floor: { name: 'the same turn, user without memories', p50: summarize(floor).p50 },
      target: 'p50 ≤ 30 ms',
      meets: s.p50 <= 30,
      note: `send → TurnFinished, instant fake model, one session; ${recalledPrompts} model requests carried recalled memories`,
    });
    return token.createApiToken.token;
  } finally {
    for (const s of sessions) await s.close().catch(() => undefined);
    await server.stop();
    await model.close();
  }
}

/**
 * Issue 29, "first searchMemories after start": the real server started again on the same data folder,
 * and `searchMemories` sent by the corpus user (`token`) as soon as /readyz answers 200, once per start.
 * Everything a fresh process does for it counts: the search thread, the embeddings call, the start-up
 * work still running (the index reconcile), code loaded on first use.
 */
export async function firstSearchAfterStartBench(b: BenchContext, dataDir: string, token: string, corpus: Corpus): Promise<void> {
  const model = await FakeOpenAIServer.start({ chunks: 3, embeddingDimension: corpus.dims });
  const first: number[] = [];
  const second: number[] = [];
  const search = `query($q: String!) { searchMemories(query: $q, limit: 10) { score memory { id content } } }`;
  try {
    for (let i = 0; i < (b.quick ? 2 : 5); i++) {
      const server = await BenchServer.start({ config: modelConfig(model), dataDir, cpuProfDir: b.cpuProfDir });
      const http = new HttpClient(server.url, 1);
      try {
        let t0 = now();
        const hits = await http.gql<{ searchMemories: unknown[] }>(search, { q: corpus.query(400 + i).text }, token);
        first.push(now() - t0);
        if (!hits.searchMemories.length) throw new Error('the first search found nothing: the row would measure an empty search');
        t0 = now();
        await http.gql(search, { q: corpus.query(500 + i).text }, token);
        second.push(now() - t0);
      } finally {
        http.close();
        await server.stop();
      }
    }
  } finally {
    await model.close();
  }
  const s = summarize(first);
  b.results.add({
    benchmark: `first searchMemories after start, small vocabulary, ${corpus.size / 1000}k memories × ${corpus.dims}`,
    latency: s,
    target: 'p99 ≤ 100 ms',
    meets: s.p99 <= 100,
    note: `the real server started ${first.length} times on the filled data folder, searchMemories sent as soon as /readyz answers; the second search of each start p50 ${summarize(second).p50.toFixed(1)} ms`,
  });
}
