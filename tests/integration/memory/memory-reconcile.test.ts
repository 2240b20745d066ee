import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { DOCUMENT_CHUNK_TYPE, DOCUMENT_ITEM_PREFIX, LanceDbMemoryStore, Memory, MemoryIndexer, MemoryScope, MemoryType, SqlMemoryStore, userOwner, type MemoryStore } from '../../../server/modules/memory';
import { RECONCILE_PAGE } from '../../../server/modules/memory/reconcile-paging';
import { User } from '../../../server/modules/users';
import { TrustLevel } from '../../../server/common/trust';
import { openTestDb, type TestDb } from './memory-fixtures';

// reconcile compares the table with the index in pages (RECONCILE_PAGE rows each): inside the database for
// the SQL store, through `entries` for LanceDB. With more memories than a few pages, every one must still
// be found: written behind the service's back, changed, or gone; document chunks stay.

const cases = [
  { name: 'SQL store, sqlite', kind: 'sqlite', store: (t: TestDb): MemoryStore => new SqlMemoryStore(t.db, { embedder: null, logger: t.logger, searchThreads: 0 }) },
  // The comparison runs on the search thread's own connection (started by a search).
  { name: 'SQL store, sqlite, search thread', kind: 'sqlite', store: (t: TestDb): MemoryStore => new SqlMemoryStore(t.db, { embedder: null, logger: t.logger, searchThreads: 1 }) },
  { name: 'SQL store, postgres', kind: 'postgres', store: (t: TestDb): MemoryStore => new SqlMemoryStore(t.db, { embedder: null, logger: t.logger, searchThreads: 0 }) },
  { name: 'LanceDB', kind: 'sqlite', store: (t: TestDb): MemoryStore => new LanceDbMemoryStore({ dir: path.join(t.dataDir, 'lancedb'), embedder: null, logger: t.logger }) },
] as const;

describe.each(cases)('MemoryIndexer.reconcile over several pages ($name)', ({ name, kind, store: makeStore }) => {
  let t: TestDb;
  let store: MemoryStore;
  let user: User;

  beforeAll(async () => {
    t = await openTestDb(kind);
    store = makeStore(t);
    await store.init?.(t.ctx);
    user = Object.assign(new User(), { displayName: 'r', trust: TrustLevel.MEMBER, createdAt: new Date(), updatedAt: new Date() });
    await t.db.repo(t.ctx, User).save(user);
    // A search starts the SQL store's search thread (where it then compares), as the warm-up does in a server.
    await store.search(t.ctx, 'lanterns', { owners: [userOwner(user.id)], limit: 1 });
  });
  afterAll(async () => {
    await store?.dispose?.();
    await t?.close();
  });

  const memory = (content: string, at: Date) =>
    Object.assign(new Memory(), { id: randomUUID(), type: MemoryType.FACT, scope: MemoryScope.USER, userId: user.id, groupId: null, content, sourceSessionId: null, importance: 0.5, source: null, createdAt: at, updatedAt: at });

  it('indexes every memory written behind its back, re-indexes the changed one and drops what is gone, never a document chunk', async () => {
    const at = new Date(Date.now() - 60_000);
    const count = RECONCILE_PAGE * 2 + 17;
    const rows = Array.from({ length: count }, (_, i) => memory(`note number ${i} about lanterns`, at));
    for (let i = 0; i < rows.length; i += 500) await t.db.repo(t.ctx, Memory).insert(rows.slice(i, i + 500));
    const chunk = `${DOCUMENT_ITEM_PREFIX}${randomUUID()}`;
    await store.upsert(t.ctx, [{ id: chunk, owner: userOwner(user.id), type: DOCUMENT_CHUNK_TYPE, content: 'a passage about lanterns', importance: 0.5, updatedAt: at }]);
    const indexer = new MemoryIndexer(t.db, store, t.logger);
    expect(await indexer.reconcile(t.ctx)).toMatchObject({ indexed: count, removed: 0 });
    // Changed behind its back, an index entry without a memory, and one more memory.
    const changed = rows[RECONCILE_PAGE + 3]!;
    await t.db.repo(t.ctx, Memory).update({ id: changed.id }, { content: 'now about a kettle', updatedAt: new Date() });
    const orphan = randomUUID();
    await store.upsert(t.ctx, [{ id: orphan, owner: userOwner(user.id), type: 'fact', content: 'an orphan about lanterns', importance: 0.5, updatedAt: new Date() }]);
    const late = memory('a late one about a kettle', at);
    await t.db.repo(t.ctx, Memory).insert(late);
    expect(await indexer.reconcile(t.ctx)).toMatchObject({ indexed: 2, removed: 1 });
    const entries = await store.entries(t.ctx);
    expect(entries.size).toBe(count + 2);
    expect(entries.has(orphan)).toBe(false);
    expect(entries.has(chunk)).toBe(true);
    const kettle = await store.search(t.ctx, 'kettle', { owners: [userOwner(user.id)], limit: 5 });
    expect(kettle.map((h) => h.id).sort()).toEqual([changed.id, late.id].sort());
    expect(await indexer.reconcile(t.ctx)).toMatchObject({ indexed: 0, removed: 0 });
    // A memory deleted behind its back while a missing one is added: the counts balance, the entry still goes.
    await t.db.repo(t.ctx, Memory).delete({ id: rows[5]!.id });
    const added = memory('added about a kettle', at);
    await t.db.repo(t.ctx, Memory).insert(added);
    expect(await indexer.reconcile(t.ctx)).toMatchObject({ indexed: 1, removed: 1 });
    expect((await store.entries(t.ctx)).has(rows[5]!.id)).toBe(false);
    if (store instanceof SqlMemoryStore) expect(store.searchThreadsRunning).toBe(name.endsWith('search thread') ? 1 : 0);
    expect(t.logs.text).not.toContain('comparing the index on the main thread');
  });

  if (kind === 'sqlite') {
    it('keeps an entry whose memory holds the same instant in another date format', async () => {
      const indexer = new MemoryIndexer(t.db, store, t.logger);
      const row = memory('a note with a plain date about lanterns', new Date(Date.UTC(2026, 0, 2, 3, 4, 5)));
      await t.db.repo(t.ctx, Memory).insert(row);
      expect(await indexer.reconcile(t.ctx)).toMatchObject({ indexed: 1 });
      // Written by hand without milliseconds (as SQLite's datetime('now') writes), then in ISO form.
      for (const text of ['2026-01-02 03:04:05', '2026-01-02T03:04:05.000Z']) {
        await t.db.dataSource.query(`UPDATE memories SET "updatedAt" = ? WHERE id = ?`, [text, row.id]);
        expect(await indexer.reconcile(t.ctx)).toMatchObject({ indexed: 0, removed: 0 });
      }
      await t.db.dataSource.query(`UPDATE memories SET "updatedAt" = ? WHERE id = ?`, ['2026-01-02 03:04:06', row.id]);
      expect(await indexer.reconcile(t.ctx)).toMatchObject({ indexed: 1, removed: 0 });
    });
  }
});
