import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { Ctx } from '../../../server/common/ctx';
import { ENTITIES } from '../../../server/entities';
import { SqlMemoryStore, userOwner, type MemoryStoreItem } from '../../../server/modules/memory';
import { openDatabase } from '../../../server/persistence/data-source';
import { Db } from '../../../server/persistence/db';
import { ConceptEmbeddings } from '../../support/conformance/concept-embeddings';
import { embedderFor, openTestDb, type TestDb } from './memory-fixtures';

// SqlMemoryStore on a SQLite file searches on a thread of its own (its own read-only connection and its
// own copy of the vectors' binary codes): these tests check that the thread sees every write, this
// process's and another connection's, and that it stops with the store.

const fact = (owner: string, content: string): MemoryStoreItem => ({ id: randomUUID(), owner, type: 'fact', content, importance: 0.5, updatedAt: new Date() });

describe('SqlMemoryStore search threads (SQLite file)', () => {
  let t: TestDb;
  let store: SqlMemoryStore;
  const embeddings = new ConceptEmbeddings();

  beforeAll(async () => {
    t = await openTestDb('sqlite');
    store = new SqlMemoryStore(t.db, { embedder: embedderFor(t, embeddings), logger: t.logger, searchThreads: 1 });
    await store.init(t.ctx);
  });
  afterAll(async () => {
    await store?.dispose();
    await t?.close();
  });

  it('runs searches on a search thread, started by the first search', async () => {
    const owner = userOwner(randomUUID());
    expect(store.searchThreadsRunning).toBe(0);
    await store.upsert(t.ctx, [fact(owner, 'The dentist is on Baker Street')]);
    const hits = await store.search(t.ctx, 'dentist', { owners: [owner], limit: 3 });
    expect(hits.map((h) => h.content)).toEqual(['The dentist is on Baker Street']);
    expect(hits[0]!.updatedAt).toBeInstanceOf(Date);
    expect(store.searchThreadsRunning).toBe(1);
    expect(t.logs.text).not.toContain('searching on the main thread');
  });

  it("applies this process's writes to the codes the thread has loaded", async () => {
    const owner = userOwner(randomUUID());
    await store.upsert(t.ctx, [fact(owner, 'I water the plants on Sundays')]);
    await store.search(t.ctx, 'car', { owners: [owner], limit: 3 }); // loads the owner's codes in the thread
    const car = fact(owner, 'My automobile is a blue hatchback');
    await store.upsert(t.ctx, [car]);
    const hits = await store.search(t.ctx, 'car', { owners: [owner], limit: 3 });
    expect(hits[0]).toMatchObject({ id: car.id, keywordScore: 0 });
    await store.delete(t.ctx, [car.id]);
    expect((await store.search(t.ctx, 'car', { owners: [owner], limit: 3 })).map((h) => h.id)).not.toContain(car.id);
  });

  it('sees vectors that another connection (another process) wrote after the codes were loaded', async () => {
    const owner = userOwner(randomUUID());
    await store.upsert(t.ctx, [fact(owner, 'The printer needs toner')]);
    await store.search(t.ctx, 'puppy', { owners: [owner], limit: 3 });
    const { dataSource } = await openDatabase(t.config, ENTITIES);
    try {
      const otherDb = new Db(dataSource);
      const other = new SqlMemoryStore(otherDb, { embedder: embedderFor({ ...t, db: otherDb }, embeddings), logger: pino({ level: 'silent' }), searchThreads: 0 });
      const dog = fact(owner, 'Our hound is called Biscuit');
      await other.upsert(Ctx.system(t.logger, 'other'), [dog]);
      const hits = await store.search(t.ctx, 'puppy', { owners: [owner], limit: 3 });
      expect(hits[0]).toMatchObject({ id: dog.id, keywordScore: 0 });
    } finally {
      await dataSource.destroy();
    }
  });

  it('counts the query terms again after a write (the keyword score follows the new counts)', async () => {
    const owner = userOwner(randomUUID());
    const [w1, w2] = [`zq${randomUUID().slice(0, 8)}`, `zq${randomUUID().slice(0, 8)}`];
    const only1 = fact(owner, `note with ${w1} alone`);
    await store.upsert(t.ctx, [only1, fact(owner, `note with ${w2} alone`), fact(owner, 'unrelated text')]);
    const scoreOf = async (s: SqlMemoryStore) => (await s.search(t.ctx, `${w1} ${w2}`, { owners: [owner], limit: 10 })).find((h) => h.id === only1.id)!.keywordScore;
    const before = await scoreOf(store);
    await store.upsert(t.ctx, Array.from({ length: 6 }, (_, i) => fact(owner, `more about ${w2} number ${i}`)));
    const after = await scoreOf(store);
    const onMainThread = new SqlMemoryStore(t.db, { embedder: null, logger: t.logger, searchThreads: 0 });
    expect(after).toBeCloseTo(await scoreOf(onMainThread), 10);
    expect(after).toBeGreaterThan(before); // w2 became common, so w1 weighs more
  });

  it('answers searches of a store opened on a filled file while its warm-up still loads other owners, as a warm index does', async () => {
    const owners = Array.from({ length: 40 }, () => userOwner(randomUUID()));
    const topics = ['The dentist is on Baker Street', 'Our hound is called Biscuit', 'My automobile is a blue hatchback', 'I water the plants on Sundays'];
    await store.upsert(t.ctx, owners.flatMap((owner, i) => topics.map((topic, k) => fact(owner, `${topic} (${i}.${k})`))));
    const queries = ['puppy', 'car', 'dentist street'];
    const asked = [owners[37]!, owners[3]!, owners[20]!];
    const warm = await Promise.all(asked.flatMap((owner) => queries.map((q) => store.search(t.ctx, q, { owners: [owner], limit: 3 }))));
    // A new store (as after a restart): its thread starts warming every owner at init; the searches are
    // sent at once, so most owners are not loaded yet when they are answered.
    const fresh = new SqlMemoryStore(t.db, { embedder: embedderFor(t, embeddings), logger: t.logger, searchThreads: 1 });
    try {
      await fresh.init(t.ctx);
      const first = await Promise.all(asked.flatMap((owner) => queries.map((q) => fresh.search(t.ctx, q, { owners: [owner], limit: 3 }))));
      // Same hits in the same order (scores move by ~1e-9 between the two: the recency part ages).
      const ranked = (list: typeof warm) => list.map((hits) => hits.map((h) => [h.id, h.score.toFixed(6)]));
      expect(ranked(first)).toEqual(ranked(warm));
      first.forEach((hits, i) => {
        expect(hits.length).toBeGreaterThan(0);
        for (const hit of hits) expect(hit.owner).toBe(asked[Math.floor(i / queries.length)]);
      });
      // A write while the warm-up runs reaches the owner whether it was loaded before or after the write.
      const late = fact(owners[39]!, 'Our new kitten is called Pepper');
      await fresh.upsert(t.ctx, [late]);
      expect((await fresh.search(t.ctx, 'kitten cat', { owners: [owners[39]!], limit: 3 }))[0]?.id).toBe(late.id);
      expect(t.logs.text).not.toContain('searching on the main thread');
    } finally {
      await fresh.dispose();
    }
  });

  it('warms up before answering warm(): its thread started, the first owner loaded and searched once; without vectors no thread', async () => {
    const owner = userOwner(randomUUID());
    await store.upsert(t.ctx, [fact(owner, 'The ferry leaves at noon')]);
    const fresh = new SqlMemoryStore(t.db, { embedder: embedderFor(t, embeddings), logger: t.logger, searchThreads: 1 });
    const keywordOnly = new SqlMemoryStore(t.db, { embedder: null, logger: t.logger, searchThreads: 1 });
    try {
      await fresh.warm(t.ctx);
      expect(fresh.searchThreadsRunning).toBe(1);
      expect(fresh.embedsQueries).toBe(true);
      expect((await fresh.search(t.ctx, 'ferry', { owners: [owner], limit: 3 }))[0]?.content).toBe('The ferry leaves at noon');
      // Without an embedder the vectors are not searched: nothing to warm and no embeddings client to load.
      await keywordOnly.warm(t.ctx);
      expect(keywordOnly.embedsQueries).toBe(false);
    } finally {
      await fresh.dispose();
      await keywordOnly.dispose();
    }
  });

  it('stops its threads on dispose and searches on the main thread afterwards', async () => {
    const local = new SqlMemoryStore(t.db, { embedder: null, logger: t.logger, searchThreads: 1 });
    const owner = userOwner(randomUUID());
    await local.upsert(t.ctx, [fact(owner, 'Locker code 4417 at the gym')]);
    expect((await local.search(t.ctx, 'locker', { owners: [owner], limit: 3 })).length).toBe(1);
    expect(local.searchThreadsRunning).toBe(1);
    await local.dispose();
    expect(local.searchThreadsRunning).toBe(0);
    expect((await local.search(t.ctx, 'locker', { owners: [owner], limit: 3 })).length).toBe(1);
  });
});
