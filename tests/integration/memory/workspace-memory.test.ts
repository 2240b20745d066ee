import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TrustLevel } from '../../../server/common/trust';
import { AuditService } from '../../../server/modules/audit';
import { Memory, MemoryIndexer, MemorySearchService, SqlMemoryStore, WorkspaceMemory } from '../../../server/modules/memory';
import { estimateTokens } from '../../../server/modules/models';
import { UserService } from '../../../server/modules/users';
import { openTestDb, type TestDb } from './memory-fixtures';

/** WorkspaceMemory without the watcher, on SQLite and PostgreSQL: files → chunks → index, and back. */
describe.each(['sqlite', 'postgres'] as const)('workspace memory on %s', (kind) => {
  let t: TestDb;
  let workspace: WorkspaceMemory;
  let search: MemorySearchService;
  let userId: string;

  beforeAll(async () => {
    t = await openTestDb(kind);
    const audit = new AuditService(t.db);
    const store = new SqlMemoryStore(t.db, { embedder: null, logger: t.logger });
    const indexer = new MemoryIndexer(t.db, store, t.logger);
    search = new MemorySearchService(t.db, store);
    workspace = new WorkspaceMemory(t.db, indexer, t.logger, { dataDir: t.dataDir, chunkTokens: 60, chunkOverlap: 10, estimate: estimateTokens, scanIntervalMs: 0 });
    userId = (await new UserService(t.db, audit, TrustLevel.MEMBER).create(t.ctx, { displayName: 'Wanda', trust: TrustLevel.MEMBER })).id;
  });
  afterAll(async () => {
    await workspace.stop();
    await t.close();
  });

  const chunks = () => t.db.repo(t.ctx, Memory).findBy({ userId });
  const find = async (q: string) => (await search.search(t.ctx, q, 5)).map((r) => r.memory.content);

  it('indexes the files of a user folder, replaces changed ones and drops removed ones', async () => {
    const folder = workspace.folderOf(userId);
    mkdirSync(path.join(folder, 'memory'), { recursive: true });
    writeFileSync(path.join(folder, 'MEMORY.md'), 'Wanda was born in Wrocław.\n');
    writeFileSync(path.join(folder, 'memory', 'pets.md'), Array.from({ length: 40 }, (_, i) => `Pet fact ${i}: the cat sleeps a lot.`).join('\n'));
    await workspace.reindexAll(t.ctx);
    const first = await chunks();
    expect(first.filter((m) => m.source === 'workspace:MEMORY.md')).toHaveLength(1);
    expect(first.filter((m) => m.source === 'workspace:memory/pets.md').length).toBeGreaterThan(3);
    expect(await find('born wroclaw')).toEqual(['Wanda was born in Wrocław.']);

    // Unchanged files keep their memories (same ids); a changed file is replaced as a whole.
    writeFileSync(path.join(folder, 'MEMORY.md'), 'Wanda was born in Kraków.\n');
    await workspace.reindexUser(t.ctx, userId);
    const second = await chunks();
    expect(second.filter((m) => m.source === 'workspace:memory/pets.md').map((m) => m.id).sort()).toEqual(
      first.filter((m) => m.source === 'workspace:memory/pets.md').map((m) => m.id).sort(),
    );
    expect(await find('born')).toEqual(['Wanda was born in Kraków.']);

    rmSync(path.join(folder, 'memory', 'pets.md'));
    await workspace.reindexUser(t.ctx, userId);
    expect((await chunks()).map((m) => m.source)).toEqual(['workspace:MEMORY.md']);
    expect(await find('cat sleeps')).toEqual([]);

    // The whole folder gone (e.g. while the server was down): its memories go on the next full re-index.
    rmSync(folder, { recursive: true, force: true });
    await workspace.reindexAll(t.ctx);
    expect(await chunks()).toEqual([]);
  });

  it('ignores folders that are not a known user id', async () => {
    const stray = path.join(workspace.root, '00000000-0000-4000-8000-000000000000');
    mkdirSync(stray, { recursive: true });
    writeFileSync(path.join(stray, 'MEMORY.md'), 'Nobody owns this.');
    await workspace.reindexAll(t.ctx);
    expect(await t.db.repo(t.ctx, Memory).countBy({ content: 'Nobody owns this.' })).toBe(0);
    expect(t.logs.text).toMatch(/workspace folder of an unknown user/);
  });
});
