import { randomUUID } from 'node:crypto';
import { SqlMemoryStore, userOwner, type MemoryStoreItem } from '../../../server/modules/memory';
import { TERM_CAP } from '../../../server/modules/memory/sql-memory-search';
import { ConceptEmbeddings } from '../../support/conformance/concept-embeddings';
import { describeMemoryStoreConformance } from '../../support/conformance/memory-store.conformance';
import { embedderFor, openTestDb } from './memory-fixtures';

describeMemoryStoreConformance('SqlMemoryStore on SQLite with sqlite-vec', async () => {
  const t = await openTestDb('sqlite');
  const embeddings = new ConceptEmbeddings();
  const embedder = embedderFor(t, embeddings);
  const store = new SqlMemoryStore(t.db, { embedder, logger: t.logger });
  return { store, ctx: t.ctx, vectors: true, embedder, embeddings, close: async () => (await store.dispose(), await t.close()) };
});

describeMemoryStoreConformance('SqlMemoryStore on SQLite with sqlite-vec, searching on the main thread (no search threads)', async () => {
  const t = await openTestDb('sqlite');
  const embeddings = new ConceptEmbeddings();
  const embedder = embedderFor(t, embeddings);
  const store = new SqlMemoryStore(t.db, { embedder, logger: t.logger, searchThreads: 0 });
  return { store, ctx: t.ctx, vectors: true, embedder, embeddings, close: async () => (await store.dispose(), await t.close()) };
});

describeMemoryStoreConformance('SqlMemoryStore on SQLite, keyword-only', async () => {
  const t = await openTestDb('sqlite');
  const store = new SqlMemoryStore(t.db, { embedder: null, logger: t.logger });
  return { store, ctx: t.ctx, vectors: false, close: async () => (await store.dispose(), await t.close()) };
});

describeMemoryStoreConformance('SqlMemoryStore on PostgreSQL, hybrid (full-text search + exact vector scan)', async () => {
  const t = await openTestDb('postgres');
  const embeddings = new ConceptEmbeddings();
  const embedder = embedderFor(t, embeddings);
  const store = new SqlMemoryStore(t.db, { embedder, logger: t.logger });
  return { store, ctx: t.ctx, vectors: true, embedder, embeddings, close: async () => (await store.dispose(), await t.close()) };
});

describeMemoryStoreConformance('SqlMemoryStore on PostgreSQL, keyword-only', async () => {
  const t = await openTestDb('postgres');
  const store = new SqlMemoryStore(t.db, { embedder: null, logger: t.logger });
  return { store, ctx: t.ctx, vectors: false, close: async () => (await store.dispose(), await t.close()) };
});

// A word found in more items than the keyword side counts (TERM_CAP): its count is estimated from the newest
// matches and its candidates are the newest, so a common word never makes a search read the whole table.
// The hits and their keyword scores stay those of exact counts.
describe.each(['sqlite', 'postgres'] as const)('SqlMemoryStore keyword side past TERM_CAP (%s)', (kind) => {
  it('finds the rare matches first, with the scores of exact counts of visible items only', async () => {
    // Relevance only (mmrLambda 1): the two rare items are near twins, which diversity would split.
    const t = await openTestDb(kind);
    const bounded = new SqlMemoryStore(t.db, { embedder: null, logger: t.logger, searchThreads: 0, mmrLambda: 1 });
    try {
      const [mine, theirs] = [userOwner(randomUUID()), userOwner(randomUUID())];
      const item = (owner: string, content: string): MemoryStoreItem => ({ id: randomUUID(), owner, type: 'fact', content, importance: 0.5, updatedAt: new Date() });
      const rare = [item(mine, 'harbour note common zephyrine 1'), item(mine, 'harbour note common zephyrine 2')];
      const items = [...Array.from({ length: TERM_CAP + 150 }, (_, i) => item(mine, `harbour note common filler ${i}`)), ...rare];
      items.splice(300, 0, item(mine, 'harbour note zephyrine alone'));
      // Someone else's items with both words must change nothing for `mine`.
      items.push(...Array.from({ length: 400 }, (_, i) => item(theirs, `common zephyrine elsewhere ${i}`)));
      await bounded.upsert(t.ctx, items);
      const search = (store: SqlMemoryStore, q: string) => store.search(t.ctx, q, { owners: [mine], limit: 5 });
      const hits = await search(bounded, 'common zephyrine');
      const alone = items[300]!;
      expect(hits.slice(0, 2).map((h) => h.id).sort()).toEqual(rare.map((r) => r.id).sort());
      expect(hits[2]!.id).toBe(alone.id);
      expect(hits.every((h) => h.owner === mine)).toBe(true);
      // Keyword scores from the visible counts (1153 items, 1152 with "common", 3 with "zephyrine"); the
      // common word's count is estimated from its newest matches, which moves scores by thousandths at most.
      const idf = (df: number) => Math.log(1 + (1153 - df + 0.5) / (df + 0.5));
      const expected = [1, 1, idf(3) / (idf(3) + idf(1152)), idf(1152) / (idf(3) + idf(1152)), idf(1152) / (idf(3) + idf(1152))];
      hits.forEach((h, i) => expect(h.keywordScore).toBeCloseTo(expected[i]!, 2));
      // A search by the common word alone still finds (recent) items with it.
      const common = await search(bounded, 'common');
      expect(common).toHaveLength(5);
      expect(common.every((h) => h.owner === mine && h.keywordScore === 1)).toBe(true);
    } finally {
      await bounded.dispose();
      await t.close();
    }
  }, 60_000);
});

describe.each(['sqlite', 'postgres'] as const)('SqlMemoryStore on %s: syncVectors and a delete meanwhile', (kind) => {
  it('writes no vector for an entry removed while its content was being embedded (nothing of it is left)', async () => {
    const t = await openTestDb(kind);
    const embeddings = new ConceptEmbeddings();
    const embedder = embedderFor(t, embeddings);
    const store = new SqlMemoryStore(t.db, { embedder, logger: t.logger, searchThreads: 0 });
    try {
      const owner = userOwner(randomUUID());
      const kept = { id: randomUUID(), owner, type: 'fact', content: 'The hound is called Biscuit', importance: 0.5, updatedAt: new Date() };
      const gone = { ...kept, id: randomUUID(), content: 'The cat is called Pepper' };
      embeddings.failing = true;
      await store.upsert(t.ctx, [kept, gone]); // keyword-only: the embedder is down
      embeddings.failing = false;
      embedder.setSource(embeddings);
      embeddings.meanwhile = async () => {
        embeddings.meanwhile = null;
        await store.delete(t.ctx, [gone.id]); // an erasure or a delete while syncVectors waits for the vectors
      };
      expect(await store.syncVectors!(t.ctx)).toBeGreaterThanOrEqual(1);
      const rows = (await t.db.dataSource.query(`SELECT count(*) AS n FROM memory_vectors WHERE owner = ${kind === 'postgres' ? '$1' : '?'}`, [owner])) as Array<{ n: number | string }>;
      expect(Number(rows[0]!.n)).toBe(1);
      expect((await store.search(t.ctx, 'puppy', { owners: [owner], limit: 3 }))[0]).toMatchObject({ id: kept.id, keywordScore: 0 });
    } finally {
      await store.dispose();
      await t.close();
    }
  });
});
