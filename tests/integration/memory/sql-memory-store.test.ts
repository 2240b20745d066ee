import { SqlMemoryStore } from '../../../server/modules/memory';
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
