import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTestApp, type TestApp } from '../../support/test-app';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { createUserWithToken, type TestUser } from '../../support/fixtures';
import { eventually } from '../../support/chat-helpers';
import { SearchMemoriesDocument, UpdateMemoryDocument } from '../../support/graphql/generated';
import { Memory } from '../../../server/modules/memory';

/**
 * Issue 5, acceptance 5 (workspace part): `MEMORY.md` and `memory/*.md` in a user's workspace folder are
 * chunked and indexed as that user's memories; an edit is reflected in search within 5 s, and a deleted
 * file's memories are gone; the index is rebuilt from the files on start.
 */
describe('workspace memory files', () => {
  let t: TestApp;
  let owner: GraphQLTestClient;
  let alice: TestUser;
  let bob: TestUser;
  let aliceClient: GraphQLTestClient;
  let bobClient: GraphQLTestClient;
  let folder: string;

  const contents = async (client: GraphQLTestClient, query: string, limit = 10) =>
    dataOf(await client.http(SearchMemoriesDocument, { query, limit })).searchMemories.map((h) => h.memory!.content);
  /** Waits until `query` finds (or no longer finds) text containing `needle`; returns the seconds it took. */
  const within = async (client: GraphQLTestClient, query: string, needle: string, present = true, timeoutMs = 5000): Promise<number> => {
    const started = Date.now();
    await eventually(async () => (await contents(client, query)).some((c) => c.includes(needle)) === present, timeoutMs, `"${needle}" ${present ? 'in' : 'gone from'} search`);
    return (Date.now() - started) / 1000;
  };

  beforeAll(async () => {
    t = await startTestApp({ config: { log: { level: 'warn' } }, keepData: true });
    await t.app.services.memory.ready;
    owner = t.client(t.ownerToken);
    alice = await createUserWithToken(owner, 'MEMBER', 'Alice');
    bob = await createUserWithToken(owner, 'MEMBER', 'Bob');
    aliceClient = t.client(alice.token);
    bobClient = t.client(bob.token);
    folder = path.join(t.dataDir, 'workspaces', alice.id);
    mkdirSync(path.join(folder, 'memory'), { recursive: true });
  });
  afterAll(async () => {
    await Promise.all([owner, aliceClient, bobClient].map((c) => c.close()));
    await t.close();
    rmSync(t.dataDir, { recursive: true, force: true });
  });

  it('indexes MEMORY.md, and an edit shows in search within 5 s', async () => {
    writeFileSync(path.join(folder, 'MEMORY.md'), '# About me\n\nMy passport number is X1234567.\nI am allergic to peanuts.\n');
    expect(await within(aliceClient, 'passport number', 'X1234567')).toBeLessThan(5);
    const [hit] = dataOf(await aliceClient.http(SearchMemoriesDocument, { query: 'passport number', limit: 1 })).searchMemories;
    expect(hit!.memory).toMatchObject({ type: 'FACT', scope: 'USER', userId: alice.id, source: 'workspace:MEMORY.md' });

    writeFileSync(path.join(folder, 'MEMORY.md'), '# About me\n\nMy passport number is Y7654321 (renewed).\nI am allergic to peanuts.\n');
    const seconds = await within(aliceClient, 'passport number', 'Y7654321');
    expect(seconds).toBeLessThan(5);
    expect(await contents(aliceClient, 'passport number X1234567')).not.toEqual(expect.arrayContaining([expect.stringContaining('X1234567')]));
  });

  it('indexes memory/*.md, drops a deleted file, and keeps it private', async () => {
    const notes = path.join(folder, 'memory', 'projects.md');
    writeFileSync(notes, 'Project Heron ships on the 14th of March.\n');
    await within(aliceClient, 'when does project heron ship', 'Heron');
    expect(await contents(bobClient, 'project heron ship')).toEqual([]);
    writeFileSync(path.join(folder, 'memory', 'ignored.txt'), 'Project Heron text file that is not markdown.\n');
    rmSync(notes);
    await within(aliceClient, 'project heron ship', 'Heron', false);
  });

  it('chunks a long file (memory.chunk_tokens / chunk_overlap) and replaces all chunks on change', async () => {
    const lines = Array.from({ length: 300 }, (_, i) => `Diary line ${i}: walked the dog and read a chapter of a novel.`);
    lines[150] = 'Diary line 150: the garage door code is 2468.';
    writeFileSync(path.join(folder, 'memory', 'diary.md'), lines.join('\n'));
    await within(aliceClient, 'garage door code', '2468');
    const ctx = t.app.systemCtx('test');
    const chunks = await t.app.db.repo(ctx, Memory).findBy({ userId: alice.id, source: 'workspace:memory/diary.md' });
    expect(chunks.length).toBeGreaterThan(5);
    writeFileSync(path.join(folder, 'memory', 'diary.md'), 'Short diary now.');
    await eventually(async () => (await t.app.db.repo(ctx, Memory).findBy({ userId: alice.id, source: 'workspace:memory/diary.md' })).length === 1, 5000, 'one chunk');
  });

  it('workspace chunks are edited in the file, not through updateMemory', async () => {
    const [hit] = dataOf(await aliceClient.http(SearchMemoriesDocument, { query: 'allergic peanuts', limit: 1 })).searchMemories;
    const res = await aliceClient.http(UpdateMemoryDocument, { id: hit!.memory!.id, input: { content: 'hacked' } });
    expect(res.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });

  it('re-indexes the files on start (changes made while the server was down)', async () => {
    const dataDir = t.dataDir;
    await t.close();
    writeFileSync(path.join(folder, 'MEMORY.md'), 'My favourite mountain is the Zugspitze.\n');
    t = await startTestApp({ dataDir, config: { log: { level: 'warn' } }, keepData: true });
    await t.app.services.memory.ready;
    aliceClient = t.client(alice.token);
    bobClient = t.client(bob.token);
    owner = t.client(t.ownerToken);
    expect(await contents(aliceClient, 'favourite mountain')).toEqual(expect.arrayContaining([expect.stringContaining('Zugspitze')]));
    expect(await contents(aliceClient, 'passport number')).not.toEqual(expect.arrayContaining([expect.stringContaining('passport')]));
  });
});
