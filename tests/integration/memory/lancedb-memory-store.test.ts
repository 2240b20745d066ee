import path from 'node:path';
import { LanceDbMemoryStore } from '../../../server/modules/memory';
import { ConceptEmbeddings } from '../../support/conformance/concept-embeddings';
import { describeMemoryStoreConformance } from '../../support/conformance/memory-store.conformance';
import { embedderFor, openTestDb } from './memory-fixtures';

describeMemoryStoreConformance('LanceDbMemoryStore with vectors', async () => {
  const t = await openTestDb('sqlite');
  const embeddings = new ConceptEmbeddings();
  const embedder = embedderFor(t, embeddings);
  const store = new LanceDbMemoryStore({ dir: path.join(t.dataDir, 'lancedb'), embedder, logger: t.logger });
  return { store, ctx: t.ctx, vectors: true, embedder, embeddings, close: async () => (await store.dispose(), await t.close()) };
});

describeMemoryStoreConformance('LanceDbMemoryStore without an embedder', async () => {
  const t = await openTestDb('sqlite');
  const store = new LanceDbMemoryStore({ dir: path.join(t.dataDir, 'lancedb'), embedder: null, logger: t.logger });
  return { store, ctx: t.ctx, vectors: false, close: async () => (await store.dispose(), await t.close()) };
});
