import { randomUUID } from 'node:crypto';
import { SqlMemoryStore, userOwner } from '../../../server/modules/memory';
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
