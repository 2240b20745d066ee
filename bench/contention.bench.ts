import { rmSync } from 'node:fs';
import { FakeOpenAIServer } from '../tests/support/fakes/fake-openai-server';
import { TrustLevel } from '../server/common/trust';
import { User } from '../server/modules/users';
import { modelConfig } from './chat.bench';
import { ChatSession, createUsers } from './support/chat';
import type { BenchContext } from './support/context';
import { Corpus, fillMemories, openCorpusDb } from './support/corpus';
import { HttpClient } from './support/http-client';
import { BenchServer } from './support/server';
import { summarize } from './support/stats';

const SEARCH = `query($q: String!) { searchMemories(query: $q, limit: 10) { score memory { id } } }`;

/** Turn latency of one user while another user searches 100k memories (quick: 5k) of 768 dims over GraphQL. */
export async function contentionBench(b: BenchContext): Promise<void> {
  const size = b.quick ? 5_000 : 100_000;
  const dims = 768;
  const model = await FakeOpenAIServer.start({ chunks: 3, embeddingDimension: dims });
  const dataDir = BenchServer.newDataDir();
  const corpus = new Corpus(size, dims, 7);
  const pre = await openCorpusDb(corpus, 'fake/fake-model', dataDir);
  const searcher = Object.assign(new User(), { displayName: 'searcher', trust: TrustLevel.MEMBER, createdAt: new Date(), updatedAt: new Date() });
  await pre.db.repo(pre.ctx, User).save(searcher);
  await fillMemories(pre, corpus, searcher.id);
  await pre.close();
  const server = await BenchServer.start({ config: modelConfig(model), dataDir, cpuProfDir: b.cpuProfDir });
  const http = new HttpClient(server.url, 8);
  let chat: ChatSession | null = null;
  try {
    const tok = await http.gql<{ createApiToken: { token: string } }>(`mutation($u: ID!) { createApiToken(name: "searcher", userId: $u) { token } }`, { u: searcher.id }, server.ownerToken);
    const [talker] = await createUsers(http, server.ownerToken, 1, 'talker');
    chat = new ChatSession(http, server.url, talker!.token);
    await chat.open();
    for (let i = 0; i < 5; i++) await chat.turn(`warm ${i}`);
    const turns = b.quick ? 15 : 150;
    const alone: number[] = [];
    for (let i = 0; i < turns; i++) alone.push((await chat.turn(`alone ${i}`)).totalMs);
    let searching = true;
    const searchLat: number[] = [];
    const loop = (async () => {
      for (let i = 0; searching; i++) {
        const t0 = performance.now();
        await http.gql(SEARCH, { q: corpus.query(i % 200).text }, tok.createApiToken.token);
        searchLat.push(performance.now() - t0);
      }
    })();
    const busy: number[] = [];
    for (let i = 0; i < turns; i++) busy.push((await chat.turn(`busy ${i}`)).totalMs);
    searching = false;
    await loop;
    const a = summarize(alone);
    const s = summarize(busy);
    b.results.add({
      benchmark: `turn latency while another user searches ${size / 1000}k memories`,
      latency: s,
      floor: { name: 'same turns without the searcher', p50: a.p50 },
      target: 'p99 within 2× of the idle p99',
      meets: s.p99 <= 2 * a.p99,
      note: `idle p50 ${a.p50.toFixed(1)} / p99 ${a.p99.toFixed(1)} ms`,
    });
    b.results.add({ benchmark: `searchMemories over GraphQL, ${size / 1000}k × ${dims}`, latency: summarize(searchLat), target: 'reported', meets: null });
  } finally {
    await chat?.close();
    http.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await model.close();
  }
}
