import { randomUUID } from 'node:crypto';
import type { Ctx } from '../../../server/common/ctx';
import { GLOBAL_OWNER, groupOwner, userOwner, type MemoryEmbedder, type MemoryStore, type MemoryStoreItem } from '../../../server/modules/memory';
import type { ConceptEmbeddings } from './concept-embeddings';

/** What a store under test comes with. */
export interface MemoryStoreFixture {
  store: MemoryStore;
  ctx: Ctx;
  /** True when the store runs with a working embedder (the vector checks run then). */
  vectors: boolean;
  /** The embedder and its source, when `vectors` (to simulate an outage). */
  embedder?: MemoryEmbedder;
  embeddings?: ConceptEmbeddings;
  close(): Promise<void>;
}

const DAY = 86_400_000;

/**
 * The MemoryStore contract (STYLE §7): every implementation runs this suite. Each test uses fresh owner
 * keys and marker words, so the tests share one store without seeing each other's items.
 */
export function describeMemoryStoreConformance(name: string, create: () => Promise<MemoryStoreFixture>): void {
  describe(`MemoryStore conformance: ${name}`, () => {
    let f: MemoryStoreFixture;
    beforeAll(async () => {
      f = await create();
      await f.store.init?.(f.ctx);
    });
    afterAll(async () => {
      await f?.close();
    });

    const owners = () => {
      const tag = randomUUID().slice(0, 8);
      return { a: userOwner(`a-${tag}`), b: userOwner(`b-${tag}`), g: groupOwner(`telegram:-100${tag}`), tag };
    };
    const item = (owner: string, content: string, extra: Partial<MemoryStoreItem> = {}): MemoryStoreItem => ({
      id: randomUUID(),
      owner,
      type: 'fact',
      content,
      importance: 0.5,
      updatedAt: new Date(),
      ...extra,
    });
    const marker = () => `zq${randomUUID().replace(/-/g, '').slice(0, 10)}`;

    it('upserts and finds an item by its words, with scores between 0 and 1', async () => {
      const { a } = owners();
      const word = marker();
      const fact = item(a, `The locker code at the gym is ${word}`);
      await f.store.upsert(f.ctx, [fact, item(a, 'Something about the weather in spring'), item(a, 'Notes on sourdough baking')]);
      const hits = await f.store.search(f.ctx, `what is my gym locker code ${word}`, { owners: [a], limit: 5 });
      expect(hits[0]).toMatchObject({ id: fact.id, owner: a, type: 'fact', content: fact.content });
      expect(hits[0]!.score).toBeGreaterThan(0);
      expect(hits[0]!.score).toBeLessThanOrEqual(1);
      expect(hits[0]!.keywordScore).toBeGreaterThan(0.5);
      expect(hits[0]!.updatedAt).toBeInstanceOf(Date);
      if (f.vectors) expect(hits[0]!.vectorScore).toBeGreaterThan(0);
    });

    it('returns only items of the owners asked for, whatever the query', async () => {
      const { a, b, g } = owners();
      const word = marker();
      const items = [item(a, `alpha ${word} private note of A`), item(b, `beta ${word} private note of B`), item(g, `gamma ${word} group note`), item(GLOBAL_OWNER, `delta ${word} global note`)];
      await f.store.upsert(f.ctx, items);
      const seen = async (list: string[] | 'all') => (await f.store.search(f.ctx, `${word} private note group global alpha beta gamma delta`, { owners: list, limit: 20 })).map((h) => h.owner).sort();
      expect(await seen([a, GLOBAL_OWNER])).toEqual([a, GLOBAL_OWNER].sort());
      expect(await seen([b])).toEqual([b]);
      expect(await seen([g, GLOBAL_OWNER])).toEqual([g, GLOBAL_OWNER].sort());
      expect(await seen([])).toEqual([]);
      expect(await seen([userOwner('nobody')])).toEqual([]);
      const all = await seen('all');
      expect(all).toEqual(expect.arrayContaining([a, b, g]));
    });

    it('never leaks another owner through vector similarity either', async () => {
      const { a, b } = owners();
      const word = marker();
      await f.store.upsert(f.ctx, [item(b, `My automobile is a red sedan ${word}`), item(a, 'I like tea')]);
      const hits = await f.store.search(f.ctx, `car ${word}`, { owners: [a], limit: 10 });
      expect(hits.every((h) => h.owner === a)).toBe(true);
    });

    it('replaces an item on upsert with the same id', async () => {
      const { a } = owners();
      const [before, after] = [marker(), marker()];
      const fact = item(a, `favourite colour is ${before}`, { updatedAt: new Date(Date.now() - DAY) });
      await f.store.upsert(f.ctx, [fact]);
      const changed = { ...fact, content: `favourite colour is ${after}`, updatedAt: new Date() };
      await f.store.upsert(f.ctx, [changed]);
      // (Vector search may still return the item for the old word, with its new content.)
      expect((await f.store.search(f.ctx, before, { owners: [a], limit: 5 })).filter((h) => h.content.includes(before))).toEqual([]);
      const hits = await f.store.search(f.ctx, after, { owners: [a], limit: 5 });
      expect(hits.map((h) => [h.id, h.content])).toEqual([[fact.id, changed.content]]);
      const entries = await f.store.entries(f.ctx);
      expect(entries.get(fact.id)).toBe(changed.updatedAt.getTime());
      // Same content again: still one item.
      await f.store.upsert(f.ctx, [changed]);
      expect(await f.store.search(f.ctx, after, { owners: [a], limit: 5 })).toHaveLength(1);
    });

    it('deletes items; unknown ids are ignored', async () => {
      const { a } = owners();
      const word = marker();
      const [one, two] = [item(a, `first ${word}`), item(a, `second ${word}`)];
      await f.store.upsert(f.ctx, [one, two]);
      await f.store.delete(f.ctx, [one.id, randomUUID()]);
      const hits = await f.store.search(f.ctx, word, { owners: [a], limit: 5 });
      expect(hits.map((h) => h.id)).toEqual([two.id]);
      expect((await f.store.entries(f.ctx)).has(one.id)).toBe(false);
      await f.store.delete(f.ctx, []);
    });

    it('filters by type (types, excludeTypes)', async () => {
      const { a } = owners();
      const word = marker();
      const reminder = item(a, `dentist appointment ${word}`, { type: 'reminder' });
      const lesson = item(a, `dentist prefers mornings ${word}`, { type: 'lesson' });
      await f.store.upsert(f.ctx, [reminder, lesson]);
      const ids = async (o: { types?: string[]; excludeTypes?: string[] }) =>
        (await f.store.search(f.ctx, `dentist ${word}`, { owners: [a], limit: 5, ...o })).map((h) => h.id).sort();
      expect(await ids({})).toEqual([reminder.id, lesson.id].sort());
      expect(await ids({ excludeTypes: ['reminder'] })).toEqual([lesson.id]);
      expect(await ids({ types: ['reminder'] })).toEqual([reminder.id]);
    });

    it('respects minScore and limit', async () => {
      const { a } = owners();
      const [w1, w2, w3] = [marker(), marker(), marker()];
      const full = item(a, `${w1} ${w2} ${w3} all three`);
      const partial = item(a, `${w1} only one`);
      await f.store.upsert(f.ctx, [full, partial, ...Array.from({ length: 6 }, (_, i) => item(a, `${w1} filler number ${i}`))]);
      const strict = await f.store.search(f.ctx, `${w1} ${w2} ${w3}`, { owners: [a], limit: 10, minScore: 0.6 });
      expect(strict.map((h) => h.id)).toEqual([full.id]);
      const loose = await f.store.search(f.ctx, `${w1} ${w2} ${w3}`, { owners: [a], limit: 3 });
      expect(loose).toHaveLength(3);
      expect(loose[0]!.id).toBe(full.id);
      for (const h of strict) expect(h.score).toBeGreaterThanOrEqual(0.6);
    });

    it('prefers the newer of two equally relevant items, and drops exact duplicates', async () => {
      const { a } = owners();
      const word = marker();
      const old = item(a, `parking spot ${word} level two`, { updatedAt: new Date(Date.now() - 400 * DAY) });
      const fresh = item(a, `parking spot ${word} level three`, { updatedAt: new Date() });
      const copy = item(a, `parking spot ${word} level three`, { updatedAt: new Date(Date.now() - 1000) });
      await f.store.upsert(f.ctx, [old, fresh, copy]);
      const hits = await f.store.search(f.ctx, `parking spot ${word}`, { owners: [a], limit: 5 });
      expect(hits[0]!.id).toBe(fresh.id);
      expect(hits.map((h) => h.id)).toContain(old.id);
      expect(hits.filter((h) => h.content === fresh.content)).toHaveLength(1);
    });

    it('treats odd query text as words (no syntax errors, no injection)', async () => {
      const { a } = owners();
      const word = marker();
      await f.store.upsert(f.ctx, [item(a, `quotes ${word} and more`)]);
      for (const q of [`"${word}`, `${word} AND OR NOT`, `NEAR(${word}) *`, `' OR 1=1 -- ${word}`, `${word}); DROP TABLE memory_index; --`, '', '   ', '???', `ü ß ${word}`]) {
        const hits = await f.store.search(f.ctx, q, { owners: [a], limit: 5 });
        expect(Array.isArray(hits)).toBe(true);
        if (q.includes(word)) expect(hits.map((h) => h.owner)).toEqual([a]);
      }
    });

    it('folds case and accents', async () => {
      const { a } = owners();
      const word = marker();
      const fact = item(a, `Café Müller ${word} is our meeting place`);
      await f.store.upsert(f.ctx, [fact]);
      expect((await f.store.search(f.ctx, `cafe MULLER ${word}`, { owners: [a], limit: 5 }))[0]?.id).toBe(fact.id);
    });

    it('indexes keyword-only while the embedder is down, and syncVectors adds the vectors later', async () => {
      if (!f.vectors || !f.embedder || !f.embeddings || !f.store.syncVectors) return;
      const { a } = owners();
      const fact = item(a, 'Hound named Biscuit');
      f.embeddings.failing = true;
      try {
        await f.store.upsert(f.ctx, [fact]);
        expect((await f.store.search(f.ctx, 'Biscuit', { owners: [a], limit: 3 }))[0]).toMatchObject({ id: fact.id, vectorScore: null });
      } finally {
        f.embeddings.failing = false;
        f.embedder.setSource(f.embeddings); // ends the back-off
      }
      expect(await f.store.syncVectors(f.ctx)).toBeGreaterThanOrEqual(1);
      const hits = await f.store.search(f.ctx, 'puppy', { owners: [a], limit: 3 });
      expect(hits[0]).toMatchObject({ id: fact.id, keywordScore: 0 });
      expect(hits[0]!.vectorScore).toBeGreaterThan(0.3);
    });

    it('finds by meaning when an embedder works (vector side of hybrid search)', async () => {
      if (!f.vectors) return;
      const { a } = owners();
      const fact = item(a, 'My automobile is a blue hatchback');
      await f.store.upsert(f.ctx, [fact, item(a, 'I water the plants on Sundays'), item(a, 'The printer needs toner')]);
      const hits = await f.store.search(f.ctx, 'car', { owners: [a], limit: 3 });
      expect(hits[0]!.id).toBe(fact.id);
      expect(hits[0]!.keywordScore).toBe(0);
      expect(hits[0]!.vectorScore).toBeGreaterThan(0.3);
    });
  });
}
