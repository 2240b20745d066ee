import { Ctx } from '../../../server/common/ctx';
import { TrustLevel } from '../../../server/common/trust';
import { AuditService } from '../../../server/modules/audit';
import {
  MemoryIndexer,
  MemoryRecallService,
  MemorySearchService,
  MemoryService,
  MemoryScope,
  MemoryType,
  SqlMemoryStore,
  createMemoryTools,
  type MemoryEmbedder,
} from '../../../server/modules/memory';
import { ChatKind, Session } from '../../../server/modules/sessions';
import type { ToolContext } from '../../../server/modules/tools';
import { UserService, type User } from '../../../server/modules/users';
import { ConceptEmbeddings } from '../../support/conformance/concept-embeddings';
import { embedderFor, openTestDb, type TestDb } from './memory-fixtures';

/** Recall, session visibility, thresholds, the memory tools and embedder failures, on real services and SQLite. */
describe('memory recall and search rules', () => {
  let t: TestDb;
  let source: ConceptEmbeddings;
  let embedder: MemoryEmbedder;
  let memories: MemoryService;
  let search: MemorySearchService;
  let recall: MemoryRecallService;
  let alice: User;
  let bob: User;
  let guest: User;
  let store: SqlMemoryStore;
  const system = () => t.ctx;
  const as = (u: User) => new Ctx({ actor: { kind: 'user', userId: u.id, trust: u.trust }, logger: t.logger });
  const dm = (u: User) => ({ id: `dm-${u.id}`, key: `web:${u.id}`, chatKind: ChatKind.DM, channel: 'web', chatId: u.id }) as Session;
  const group = (chatId: string) => ({ id: `g-${chatId}`, key: `agent:main:telegram:group:${chatId}`, chatKind: ChatKind.GROUP, channel: 'telegram', chatId }) as Session;

  beforeAll(async () => {
    t = await openTestDb('sqlite');
    source = new ConceptEmbeddings();
    embedder = embedderFor(t, source);
    const audit = new AuditService(t.db);
    store = new SqlMemoryStore(t.db, { embedder, logger: t.logger });
    memories = new MemoryService(t.db, audit, new MemoryIndexer(t.db, store, t.logger));
    search = new MemorySearchService(t.db, store, { maxResults: 3, minScore: 0.2 });
    recall = new MemoryRecallService(search);
    const users = new UserService(t.db, audit, TrustLevel.MEMBER);
    alice = await users.create(system(), { displayName: 'Alice', trust: TrustLevel.MEMBER });
    bob = await users.create(system(), { displayName: 'Bob', trust: TrustLevel.MEMBER });
    guest = await users.create(system(), { displayName: 'Guest', trust: TrustLevel.GUEST });
    const own = (u: User, content: string, type = MemoryType.FACT) => memories.create(as(u), { content, type });
    await own(alice, 'Alice plays the cello in an orchestra.');
    await own(alice, 'Alice has a cello lesson reminder for Friday.', MemoryType.REMINDER);
    await own(bob, 'Bob plays the cello on Sundays.');
    await memories.create(system(), { content: 'The guest plays the cello too.', userId: guest.id });
    await memories.create(system(), { content: 'The choir group rehearses cello parts on Thursdays.', scope: MemoryScope.GROUP, groupId: 'agent:main:telegram:group:choir' });
    await memories.create(system(), { content: 'The chess group cello joke is famous.', scope: MemoryScope.GROUP, groupId: 'agent:main:telegram:group:chess' });
    await memories.create(system(), { content: 'Global: the cello festival is in June.', scope: MemoryScope.GLOBAL });
  });
  afterAll(async () => {
    await store?.dispose();
    await t?.close();
  });

  const recalled = async (u: User, session: Session, query = 'who plays the cello?') => (await recall.recall(as(u), session, query)).map((m) => m.content).sort();

  it('in a direct chat: own and global memories, never reminders, never anyone else\'s', async () => {
    expect(await recalled(alice, dm(alice))).toEqual(['Alice plays the cello in an orchestra.', 'Global: the cello festival is in June.']);
    expect(await recalled(bob, dm(bob))).toEqual(['Bob plays the cello on Sundays.', 'Global: the cello festival is in June.']);
  });

  it("in a group: that group's and global memories, never a member's private ones", async () => {
    expect(await recalled(alice, group('choir'))).toEqual(['Global: the cello festival is in June.', 'The choir group rehearses cello parts on Thursdays.']);
    expect(await recalled(bob, group('chess'))).toEqual(['Global: the cello festival is in June.', 'The chess group cello joke is famous.']);
  });

  it('GUESTs and unknown senders recall nothing', async () => {
    expect(await recalled(guest, dm(guest))).toEqual([]);
    const anonymous = new Ctx({ actor: { kind: 'anonymous' }, logger: t.logger });
    expect(await recall.recall(anonymous, dm(alice), 'cello')).toEqual([]);
  });

  it('respects memory.min_score and memory.max_results', async () => {
    for (let i = 0; i < 5; i++) await memories.create(as(bob), { content: `Bob's cello string number ${i} broke.` });
    expect((await recall.recall(as(bob), dm(bob), 'cello string broke')).length).toBe(3);
    const strict = new MemoryRecallService(new MemorySearchService(t.db, search.store, { maxResults: 6, minScore: 0.99 }));
    expect(await strict.recall(as(bob), dm(bob), 'who plays the cello?')).toEqual([]);
    // A query sharing no word with any memory recalls nothing, whatever the vectors say.
    expect(await recall.recall(as(alice), dm(alice), 'hello there')).toEqual([]);
    const none = new MemoryRecallService(new MemorySearchService(t.db, search.store, { maxResults: 0, minScore: 0 }));
    expect(await none.recall(as(alice), dm(alice), 'cello')).toEqual([]);
  });

  it('explicit search (memory_search) does show reminders, with the same visibility', async () => {
    const [searchTool, saveTool] = createMemoryTools({ search, memories, db: t.db });
    const session = await t.db.repo(t.ctx, Session).save(
      t.db.repo(t.ctx, Session).create({ key: `web:${alice.id}`, userId: alice.id, channel: 'web', chatId: alice.id, chatKind: ChatKind.DM, status: 'ACTIVE' as never, startedAt: new Date(), lastActivityAt: new Date() }),
    );
    const tc: ToolContext = { ctx: as(alice), sessionId: session.id, channel: 'web', chatId: alice.id, signal: new AbortController().signal };
    const out = (await searchTool!.run(tc, { query: 'cello lesson reminder' })) as { results: Array<{ content: string; type: string }> };
    expect(out.results.map((r) => r.content)).toContain('Alice has a cello lesson reminder for Friday.');
    expect(out.results.some((r) => /Bob|guest|group/.test(r.content))).toBe(false);
    const saved = (await saveTool!.run(tc, { content: 'Alice tunes her cello to 442 Hz.', type: 'lesson' })) as { id: string; type: string };
    expect(saved.type).toBe('lesson');
    const found = (await searchTool!.run(tc, { query: 'tunes 442' })) as { results: Array<{ id: string }> };
    expect(found.results[0]!.id).toBe(saved.id);
    expect(await memories.findMany(as(bob), {}, { first: 50, afterId: null }).then((p) => p.nodes.map((m) => m.id))).not.toContain(saved.id);
  });

  it('an embedder failure makes search keyword-only with one log line, and it recovers', async () => {
    const flaky = new ConceptEmbeddings(32, 'test/flaky');
    const e = embedderFor(t, flaky);
    // A back-off far longer than the test, ended by hand below: 5 searches under CI load can take longer
    // than any short one, and a retry inside the loop would count as an embeddings call per turn.
    (e as unknown as { options: { retryAfterMs: number } }).options.retryAfterMs = 600_000;
    const store = new SqlMemoryStore(t.db, { embedder: e, logger: t.logger });
    const s = new MemorySearchService(t.db, store, { maxResults: 6, minScore: 0.2 });
    const r = new MemoryRecallService(s);
    await store.upsert(t.ctx, [{ id: 'flaky-1', owner: `user:${alice.id}`, type: 'fact', content: 'Alice prefers oolong tea.', importance: 0.5, updatedAt: new Date() }]);
    const warnings = () => t.logs.entries().filter((l) => String(l.msg).startsWith('embeddings failed')).length;
    const before = warnings();
    const callsBefore = flaky.calls;
    flaky.failing = true;
    for (let i = 0; i < 5; i++) {
      const hits = await store.search(t.ctx, `oolong tea ${i}`, { owners: [`user:${alice.id}`], limit: 3 });
      expect(hits[0]).toMatchObject({ id: 'flaky-1', vectorScore: null });
      await r.recall(as(alice), dm(alice), `oolong ${i}`);
    }
    expect(warnings() - before).toBe(1);
    expect(flaky.calls - callsBefore).toBe(1); // no embeddings call per turn while it is down
    flaky.failing = false;
    (e as unknown as { downUntil: number }).downUntil = 0; // the back-off is over
    const hits = await store.search(t.ctx, 'oolong tea', { owners: [`user:${alice.id}`], limit: 3 });
    expect(hits[0]!.vectorScore).not.toBeNull();
    expect(t.logs.entries().some((l) => String(l.msg).startsWith('embeddings work again'))).toBe(true);
    // The item indexed while the embedder was down... was indexed before; a new one gets its vector on sync.
    flaky.failing = true;
    (e as unknown as { downUntil: number }).downUntil = 0;
    await store.upsert(t.ctx, [{ id: 'flaky-2', owner: `user:${alice.id}`, type: 'fact', content: 'Alice drinks genmaicha.', importance: 0.5, updatedAt: new Date() }]);
    flaky.failing = false;
    (e as unknown as { downUntil: number }).downUntil = 0;
    expect(await store.syncVectors(t.ctx)).toBeGreaterThanOrEqual(1);
    await store.dispose();
  });

  it('embeds in batches and never twice for the same content (cache by content hash + model)', async () => {
    const counting = new ConceptEmbeddings(32, 'test/counting');
    const e = embedderFor(t, counting);
    const store = new SqlMemoryStore(t.db, { embedder: e, logger: t.logger });
    const items = Array.from({ length: 150 }, (_, i) => ({ id: `batch-${i}`, owner: `user:${bob.id}`, type: 'fact', content: `Batch fact number ${i % 100}`, importance: 0.5, updatedAt: new Date() }));
    await store.upsert(t.ctx, items);
    expect(counting.texts).toBe(100); // 150 items, 100 distinct contents
    expect(counting.calls).toBe(2); // batches of 64: 64 + 36
    await store.upsert(t.ctx, items.map((i) => ({ ...i, id: `${i.id}-copy` })));
    expect(counting.texts).toBe(100);
    await store.delete(t.ctx, [...items.map((i) => i.id), ...items.map((i) => `${i.id}-copy`)]);
  });

  it('a workspace chunk cannot be edited or deleted through the service', async () => {
    const chunk = await memories.create(as(alice), { content: 'A chunk of MEMORY.md.' });
    await t.db.repo(t.ctx, chunk.constructor as never).update({ id: chunk.id }, { source: 'workspace:MEMORY.md' } as never);
    await expect(memories.update(as(alice), chunk.id, { content: 'changed' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(memories.delete(as(alice), chunk.id)).rejects.toMatchObject({ code: 'CONFLICT' });
  });
});
