import { startTestApp, type TestApp } from '../../support/test-app';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { createUserWithToken, type TestUser } from '../../support/fixtures';
import { CreateMemoryDocument, SearchMemoriesDocument, UpdateMemoryDocument } from '../../support/graphql/generated';
import { send } from '../../support/chat-helpers';
import { seedDistractors } from './memory-corpus';

const FACT = "Alice's gym locker code is 4417-ZETA.";
const BOBS = "Bob's gym locker code is 9999-OMEGA.";

/**
 * Issue 5, acceptance 1: `searchMemories` finds the one exact fact among 10 000 distractors (near misses
 * included) with hybrid search and keyword-only, and only within what the caller may see.
 */
describe('searchMemories over a seeded corpus', () => {
  let t: TestApp;
  let owner: GraphQLTestClient;
  let alice: TestUser;
  let bob: TestUser;
  let aliceClient: GraphQLTestClient;
  let bobClient: GraphQLTestClient;
  let factId: string;
  let timings: { insertS: number; indexS: number };

  const search = async (client: GraphQLTestClient, query: string, limit = 5) =>
    dataOf(await client.http(SearchMemoriesDocument, { query, limit })).searchMemories;

  beforeAll(async () => {
    t = await startTestApp({ config: { log: { level: 'warn' } } });
    await t.app.services.memory.ready;
    owner = t.client(t.ownerToken);
    alice = await createUserWithToken(owner, 'MEMBER', 'Alice');
    bob = await createUserWithToken(owner, 'MEMBER', 'Bob');
    aliceClient = t.client(alice.token);
    bobClient = t.client(bob.token);
    timings = await seedDistractors(t, alice.id, 10_000);
    factId = dataOf(await aliceClient.http(CreateMemoryDocument, { input: { content: FACT } })).createMemory.id;
    dataOf(await bobClient.http(CreateMemoryDocument, { input: { content: BOBS } }));
  }, 120_000);
  afterAll(async () => {
    await Promise.all([owner, aliceClient, bobClient].map((c) => c.close()));
    await t.close();
  });

  it('seeds and indexes 10 000 memories, every one with a vector', async () => {
    // Speed is measured by `npm run bench`, not asserted here; the timings are printed for information.
    console.log(`seeded in ${timings.insertS.toFixed(1)} s, indexed in ${timings.indexS.toFixed(1)} s`);
    const [row] = await t.app.dataSource.query('SELECT COUNT(*) AS n FROM memory_index WHERE "vectorModel" IS NOT NULL');
    expect(Number(row.n)).toBeGreaterThanOrEqual(10_000);
  });

  it('hybrid: the exact fact comes first, with keyword and vector scores', async () => {
    const hits = await search(aliceClient, "What's the code of my gym locker?");
    expect(hits[0]!.memory).toMatchObject({ id: factId, content: FACT, userId: alice.id, scope: 'USER', type: 'FACT' });
    expect(hits[0]!.keywordScore).toBe(1);
    expect(hits[0]!.vectorScore).toBeGreaterThan(0);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]?.score ?? 0);
    // An exact identifier finds it too.
    expect((await search(aliceClient, '4417-ZETA'))[0]!.memory!.id).toBe(factId);
  });

  it('keyword-only (embedder switched off) finds it as well', async () => {
    t.app.services.memory.useEmbeddings(null);
    try {
      const hits = await search(aliceClient, "What's the code of my gym locker?");
      expect(hits[0]!.memory!.id).toBe(factId);
      expect(hits.every((h) => h.vectorScore === null)).toBe(true);
      expect((await search(aliceClient, 'zeta 4417'))[0]!.memory!.id).toBe(factId);
    } finally {
      t.app.services.memory.useEmbeddings(t.app.chat!.router);
    }
  });

  it("a MEMBER never finds another user's memory; ADMIN and above search everyone's", async () => {
    const bobs = await search(bobClient, 'gym locker code 4417 ZETA', 20);
    expect(bobs.map((h) => h.memory!.content)).toEqual([BOBS]);
    const alices = await search(aliceClient, 'gym locker code 9999 OMEGA', 50);
    expect(alices.map((h) => h.memory!.content)).not.toContain(BOBS);
    expect(alices.every((h) => h.memory!.userId === alice.id)).toBe(true);
    const everyone = (await search(owner, 'gym locker code', 10)).map((h) => h.memory!.content);
    expect(everyone).toEqual(expect.arrayContaining([FACT, BOBS]));
  });

  it('follows updates and deletes at once', async () => {
    const id = dataOf(await aliceClient.http(CreateMemoryDocument, { input: { content: 'The spare bike key hides under the red flowerpot.' } })).createMemory.id;
    expect((await search(aliceClient, 'where is the spare bike key'))[0]!.memory!.id).toBe(id);
    dataOf(await aliceClient.http(UpdateMemoryDocument, { id, input: { content: 'The spare bike key hides in the mailbox.' } }));
    const after = await search(aliceClient, 'spare bike key flowerpot');
    expect(after[0]!.memory).toMatchObject({ id, content: 'The spare bike key hides in the mailbox.' });
    const res = await aliceClient.http<{ deleteMemory: boolean }, { id: string }>('mutation($id: ID!) { deleteMemory(id: $id) }', { id });
    expect(dataOf(res).deleteMemory).toBe(true);
    expect((await search(aliceClient, 'spare bike key mailbox', 20)).map((h) => h.memory!.id)).not.toContain(id);
  });

  it('validates its arguments', async () => {
    const empty = await aliceClient.http(SearchMemoriesDocument, { query: '', limit: 5 });
    expect(empty.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const big = await aliceClient.http(SearchMemoriesDocument, { query: 'x', limit: 500 });
    expect(big.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const anonymous = await t.client(null).http(SearchMemoriesDocument, { query: 'gym', limit: 5 });
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('searchMemories on the LanceDB backend (memory.vector_store: lancedb)', () => {
  let t: TestApp;
  let client: GraphQLTestClient;

  beforeAll(async () => {
    t = await startTestApp({ config: { memory: { vector_store: 'lancedb' }, log: { level: 'warn' } } });
    await t.app.services.memory.ready;
    const alice = await createUserWithToken(t.client(t.ownerToken), 'MEMBER', 'Alice');
    client = t.client(alice.token);
  });
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  it('indexes through the memory service and searches hybrid', async () => {
    expect(t.app.services.memory.store.name).toBe('lancedb');
    const id = dataOf(await client.http(CreateMemoryDocument, { input: { content: FACT } })).createMemory.id;
    dataOf(await client.http(CreateMemoryDocument, { input: { content: 'The gym towel is blue.' } }));
    const hits = dataOf(await client.http(SearchMemoriesDocument, { query: 'gym locker code', limit: 5 })).searchMemories;
    expect(hits[0]!.memory!.id).toBe(id);
    expect(hits[0]!.vectorScore).not.toBeNull();
  });
});

describe('/memories', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ config: { log: { level: 'warn' } } });
  });
  afterAll(async () => t.close());

  it('lists the sender\'s own memories, newest first, in a direct chat', async () => {
    const owner = t.client(t.ownerToken);
    const alice = await createUserWithToken(owner, 'MEMBER', 'Alice');
    const bob = await createUserWithToken(owner, 'MEMBER', 'Bob');
    const aliceClient = t.client(alice.token);
    const bobClient = t.client(bob.token);
    expect((await send(aliceClient, '/memories')).reply).toBe('I have no memories about you yet.');
    for (let i = 0; i < 12; i++) dataOf(await aliceClient.http(CreateMemoryDocument, { input: { content: `Alice note ${i}` } }));
    dataOf(await bobClient.http(CreateMemoryDocument, { input: { content: 'Bob secret note' } }));
    const reply = (await send(aliceClient, '/memories')).reply!;
    const lines = reply.split('\n');
    expect(lines[0]).toBe('What I remember about you (12):');
    expect(lines[1]).toBe('• (fact) Alice note 11');
    expect(lines.filter((l) => l.startsWith('•'))).toHaveLength(10);
    expect(reply).toMatch(/and 2 more/);
    expect(reply).not.toContain('Bob');
    await Promise.all([owner, aliceClient, bobClient].map((c) => c.close()));
  });
});
