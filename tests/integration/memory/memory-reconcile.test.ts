import { randomUUID } from 'node:crypto';
import { Memory, MemoryIndexer, MemoryScope, MemoryType, SqlMemoryStore, userOwner } from '../../../server/modules/memory';
import { RECONCILE_PAGE } from '../../../server/modules/memory/reconcile-paging';
import { User } from '../../../server/modules/users';
import { TrustLevel } from '../../../server/common/trust';
import { openTestDb, type TestDb } from './memory-fixtures';

// reconcile reads the table and the index in pages (RECONCILE_PAGE rows each); with more memories than a
// few pages, every one must still be found: written behind the service's back, changed, or gone.

describe.each(['sqlite', 'postgres'] as const)('MemoryIndexer.reconcile over several pages (%s)', (kind) => {
  let t: TestDb;
  let store: SqlMemoryStore;

  beforeAll(async () => {
    t = await openTestDb(kind);
    store = new SqlMemoryStore(t.db, { embedder: null, logger: t.logger, searchThreads: 0 });
  });
  afterAll(async () => {
    await store?.dispose();
    await t?.close();
  });

  it('indexes every memory written behind its back, re-indexes the changed one and drops what is gone', async () => {
    const user = Object.assign(new User(), { displayName: 'r', trust: TrustLevel.MEMBER, createdAt: new Date(), updatedAt: new Date() });
    await t.db.repo(t.ctx, User).save(user);
    const at = new Date(Date.now() - 60_000);
    const count = RECONCILE_PAGE * 2 + 17;
    const rows = Array.from({ length: count }, (_, i) =>
      Object.assign(new Memory(), { id: randomUUID(), type: MemoryType.FACT, scope: MemoryScope.USER, userId: user.id, groupId: null, content: `note number ${i} about lanterns`, sourceSessionId: null, importance: 0.5, source: null, createdAt: at, updatedAt: at }),
    );
    for (let i = 0; i < rows.length; i += 500) await t.db.repo(t.ctx, Memory).insert(rows.slice(i, i + 500));
    const indexer = new MemoryIndexer(t.db, store, t.logger);
    expect(await indexer.reconcile(t.ctx)).toMatchObject({ indexed: count, removed: 0 });
    // Changed behind its back, an index entry without a memory, and one more memory.
    const changed = rows[RECONCILE_PAGE + 3]!;
    await t.db.repo(t.ctx, Memory).update({ id: changed.id }, { content: 'now about a kettle', updatedAt: new Date() });
    const orphan = randomUUID();
    await store.upsert(t.ctx, [{ id: orphan, owner: userOwner(user.id), type: 'fact', content: 'an orphan about lanterns', importance: 0.5, updatedAt: new Date() }]);
    const late = Object.assign(new Memory(), { ...rows[0]!, id: randomUUID(), content: 'a late one about a kettle' });
    await t.db.repo(t.ctx, Memory).insert(late);
    expect(await indexer.reconcile(t.ctx)).toMatchObject({ indexed: 2, removed: 1 });
    const entries = await store.entries(t.ctx);
    expect(entries.size).toBe(count + 1);
    expect(entries.has(orphan)).toBe(false);
    const kettle = await store.search(t.ctx, 'kettle', { owners: [userOwner(user.id)], limit: 5 });
    expect(kettle.map((h) => h.id).sort()).toEqual([changed.id, late.id].sort());
    expect(await indexer.reconcile(t.ctx)).toMatchObject({ indexed: 0, removed: 0 });
  });
});
