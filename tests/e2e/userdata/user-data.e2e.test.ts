/**
 * A user's data (issue 22, acceptance 3): `exportUserData` builds an archive on the `exports` queue with
 * progress (`jobProgress`), downloadable once; it holds the user's profile, identities, sessions and
 * messages, memories, beats, usage and workspace files, and nothing of anyone else. `eraseUser` then
 * leaves no row, vector, Redis key or file of the user (a scan of every table, the Redis keyspace and the
 * data folder), keeps an anonymous tombstone, is idempotent, and the user's identity pairs again as new.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { TrustLevel } from '../../../server/common/trust';
import { AuditEntry } from '../../../server/modules/audit';
import { PairingRequest } from '../../../server/modules/pairing';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, type TestUser } from '../../support/fixtures';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { send } from '../../support/chat-helpers';
import { startTestApp, type TestApp } from '../../support/test-app';
import { handle, inbound, startFakeTransport } from '../pairing/pairing-fixture';
import { scanFiles, scanRedis, scanTables } from './user-data-scan';
import { runCli } from '../cli/run-cli';

const EXPORT = /* GraphQL */ `mutation Export($userId: ID!) { exportUserData(userId: $userId) { exportId jobId downloadUrl expiresAt } }`;
const ERASE = /* GraphQL */ `mutation Erase($userId: ID!) { eraseUser(userId: $userId) { userId existed rows tables outside } }`;
const JOB_PROGRESS = /* GraphQL */ `subscription JobProgress($jobId: ID!) { jobProgress(jobId: $jobId) { jobId queue state percent progress result error } }`;
const CREATE_MEMORY = /* GraphQL */ `mutation M($input: CreateMemoryInput!) { createMemory(input: $input) { id } }`;
const CREATE_BEAT = /* GraphQL */ `mutation B($input: CreateBeatInput!) { createBeat(input: $input) { id } }`;
const ADD_DOCUMENT = /* GraphQL */ `mutation D($input: AddDocumentInput!) { addDocument(input: $input) { id } }`;
const DOCUMENT = /* GraphQL */ `query Doc($id: ID!) { document(id: $id) { id status } }`;
const SEARCH = /* GraphQL */ `query S($query: String!) { searchMemories(query: $query, limit: 5) { memory { id content } } }`;

interface Person {
  user: TestUser;
  client: GraphQLTestClient;
  marker: string;
  memoryId: string;
  beatId: string;
  documentId: string;
  sessionIds: string[];
  handle: string;
}

let t: TestApp;
let model: FakeOpenAIServer;
let owner: GraphQLTestClient;
const people: Record<'ada' | 'bob', Person> = {} as never;

async function makePerson(name: 'ada' | 'bob', telegramHandle: string): Promise<Person> {
  const user = await createUserWithToken(owner, TrustLevel.TRUSTED, `${name} ${Date.now()}`);
  const client = t.client(user.token);
  const marker = `${name}-marker-${user.id.slice(0, 8)}`;
  const sessionIds = new Set<string>();
  for (const text of [`hello from ${marker}`, `second note ${marker}`]) sessionIds.add((await send(client, text)).sessionId);
  const memoryId = dataOf(await client.http<{ createMemory: { id: string } }, unknown>(CREATE_MEMORY, { input: { content: `${marker} likes green tea` } })).createMemory.id;
  const beatId = dataOf(await client.http<{ createBeat: { id: string } }, unknown>(CREATE_BEAT, { input: { name: `${name} daily`, cron: '0 7 * * *', kind: 'REMINDER', text: `stand up ${marker}` } })).createBeat.id;
  const documentId = dataOf(
    await client.http<{ addDocument: { id: string } }, unknown>(ADD_DOCUMENT, {
      input: { name: `${name}-notes.txt`, mimeType: 'text/plain', contentBase64: Buffer.from(`Field notes of ${marker}: the orchard has twelve apple trees.`).toString('base64') },
    }),
  ).addDocument.id;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = dataOf(await client.http<{ document: { status: string } }, unknown>(DOCUMENT, { id: documentId })).document.status;
    if (status === 'READY') break;
    if (status === 'FAILED' || Date.now() > deadline) throw new Error(`document ingestion ended ${status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await t.app.services.users.linkIdentity(t.app.systemCtx('test'), user.id, 'telegram', telegramHandle);
  const ws = path.join(t.dataDir, 'workspaces', user.id);
  mkdirSync(ws, { recursive: true });
  writeFileSync(path.join(ws, 'MEMORY.md'), `# Notes\n${marker} keeps a garden.\n`);
  return { user, client, marker, memoryId, beatId, documentId, sessionIds: [...sessionIds], handle: telegramHandle };
}

/** Follows a job to its end over the WebSocket; returns every update. */
function follow(client: GraphQLTestClient, jobId: string): Promise<Array<{ state: string; percent: number | null; result: unknown; error: string | null }>> {
  const updates: Array<{ state: string; percent: number | null; result: unknown; error: string | null }> = [];
  return new Promise((resolve, reject) => {
    client.wsClient().subscribe<{ jobProgress: (typeof updates)[number] }>(
      { query: JOB_PROGRESS, variables: { jobId } },
      { next: (v) => (v.errors ? reject(new Error(JSON.stringify(v.errors))) : updates.push(v.data!.jobProgress)), error: reject, complete: () => resolve(updates) },
    );
  });
}

beforeAll(async () => {
  model = await FakeOpenAIServer.start();
  t = await startTestApp({
    config: {
      ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } } },
      session: { summarizer_mode: 'manual' },
      channels: { telegram: { dm_policy: 'pairing' } },
    },
  });
  owner = t.client(t.ownerToken);
  people.ada = await makePerson('ada', '7100200');
  people.bob = await makePerson('bob', '7100300');
  // The memories are indexed with vectors (the fake model embeds) before the export and the erasure look.
  await t.app.services.memory.ready;
}, 60_000);

afterAll(async () => {
  for (const p of Object.values(people)) await p.client.close();
  await owner.close();
  await t.close();
  await model.close();
});

describe('exportUserData', () => {
  let files: Map<string, string>;

  beforeAll(async () => {
    const ada = people.ada;
    const requested = dataOf(await ada.client.http<{ exportUserData: { exportId: string; jobId: string; downloadUrl: string; expiresAt: string } }, unknown>(EXPORT, { userId: ada.user.id })).exportUserData;
    expect(requested.downloadUrl).toMatch(new RegExp(`^/exports/${requested.exportId}\\?token=[A-Za-z0-9_-]{40,}$`));
    const updates = await follow(ada.client, requested.jobId);
    expect(updates.at(-1)).toMatchObject({ state: 'COMPLETED', percent: 100 });
    const res = await fetch(`${t.url}${requested.downloadUrl}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/gzip');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-export-'));
    const archive = path.join(dir, 'export.tar.gz');
    writeFileSync(archive, Buffer.from(await res.arrayBuffer()));
    const out = path.join(dir, 'x');
    mkdirSync(out);
    await tar.extract({ file: archive, cwd: out } as tar.TarOptionsWithAliasesAsyncFile);
    files = new Map();
    const walk = (d: string, rel: string) => {
      for (const name of readdirSync(d, { withFileTypes: true })) {
        if (name.isDirectory()) walk(path.join(d, name.name), `${rel}${name.name}/`);
        else files.set(`${rel}${name.name}`, readFileSync(path.join(d, name.name), 'utf8'));
      }
    };
    walk(out, '');
    rmSync(dir, { recursive: true, force: true });
    // The link works once.
    const again = await fetch(`${t.url}${requested.downloadUrl}`);
    expect(again.status).toBe(404);
  }, 60_000);

  const rows = (file: string) => (files.get(file) ?? '').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

  it('holds the profile, identities, sessions, messages, memories, beats, usage and workspace files', () => {
    const ada = people.ada;
    expect(JSON.parse(files.get('profile.json')!)).toMatchObject({ id: ada.user.id, trust: 'TRUSTED' });
    expect(rows('identities.jsonl')).toEqual([expect.objectContaining({ channel: 'telegram', handle: ada.handle })]);
    expect(rows('sessions.jsonl').map((s) => s.id).sort()).toEqual(expect.arrayContaining(ada.sessionIds));
    const texts = rows('messages.jsonl').map((m) => m.content);
    expect(texts).toEqual(expect.arrayContaining([`hello from ${ada.marker}`, `second note ${ada.marker}`]));
    expect(rows('messages.jsonl').filter((m) => m.role === 'ASSISTANT').length).toBeGreaterThanOrEqual(2);
    expect(rows('memories.jsonl').map((m) => m.id)).toContain(ada.memoryId);
    expect(rows('beats.jsonl').map((b) => b.id)).toEqual([ada.beatId]);
    expect(rows('usage.jsonl').length).toBeGreaterThanOrEqual(2);
    expect(rows('documents.jsonl').map((d) => d.id)).toEqual([ada.documentId]);
    expect(rows('document_chunks.jsonl').map((c) => c.content).join(' ')).toContain(`Field notes of ${ada.marker}`);
    expect(files.get('workspace/MEMORY.md')).toContain(`${ada.marker} keeps a garden.`);
    const manifest = JSON.parse(files.get('manifest.json')!) as { format: string; userId: string; tables: Record<string, number> };
    expect(manifest).toMatchObject({ format: 'muninn-user-export', userId: ada.user.id });
    expect(manifest.tables.messages).toBe(rows('messages.jsonl').length);
  });

  it('holds nothing of any other user, and no token hash', () => {
    const bob = people.bob;
    const all = [...files.values()].join('\n');
    for (const needle of [bob.user.id, bob.marker, bob.memoryId, bob.beatId, bob.documentId, ...bob.sessionIds, t.ownerToken]) expect(all).not.toContain(needle);
    for (const row of rows('api_tokens.jsonl')) expect(Object.keys(row)).not.toContain('tokenHash');
  });
});

describe('eraseUser', () => {
  let bobMessagesBefore: number;

  beforeAll(async () => {
    bobMessagesBefore = Number(
      ((await t.app.db.dataSource.query(`SELECT count(*) AS n FROM messages WHERE "sessionId" IN (${people.bob.sessionIds.map((_, i) => (t.app.db.kind === 'postgres' ? `$${i + 1}` : '?')).join(', ')})`, people.bob.sessionIds)) as Array<{ n: number }>)[0]!.n,
    );
    const ada = people.ada;
    // Ada's index holds her memory and her document's chunks (with vectors) before the erasure.
    expect((await scanTables(t, [ada.memoryId])).length).toBeGreaterThan(1);
    expect((await scanTables(t, [ada.documentId])).length).toBeGreaterThan(2);
    expect(scanFiles(t.dataDir, [ada.documentId]).length).toBeGreaterThan(0);
  });

  it('leaves no row, vector, Redis key or file of the user, and an anonymous tombstone', async () => {
    const ada = people.ada;
    const report = dataOf(await owner.http<{ eraseUser: { existed: boolean; rows: number; tables: Record<string, number>; outside: Record<string, number> } }, unknown>(ERASE, { userId: ada.user.id })).eraseUser;
    expect(report.existed).toBe(true);
    expect(report.tables).toMatchObject({ users: 1, identities: 1, sessions: ada.sessionIds.length, memories: expect.any(Number), beats: 1 });
    expect(report.outside['memory index']).toBeGreaterThanOrEqual(1);
    const needles = [ada.user.id, ada.marker, ada.memoryId, ada.beatId, ada.documentId, ...ada.sessionIds];
    expect(await scanTables(t, needles)).toEqual([]);
    expect(await scanRedis(t, needles)).toEqual([]);
    expect(scanFiles(t.dataDir, needles)).toEqual([]);
    const sys = t.app.systemCtx('test');
    const tombstones = await t.app.db.repo(sys, AuditEntry).findBy({ action: 'user.erase' });
    expect(tombstones).toHaveLength(1);
    expect(tombstones[0]!.targetType).toBe('ErasedUser');
    expect(JSON.stringify(tombstones[0])).not.toContain(ada.user.id);
  });

  it("keeps everyone else's data, searchable", async () => {
    const bob = people.bob;
    const n = Number(
      ((await t.app.db.dataSource.query(`SELECT count(*) AS n FROM messages WHERE "sessionId" IN (${bob.sessionIds.map((_, i) => (t.app.db.kind === 'postgres' ? `$${i + 1}` : '?')).join(', ')})`, bob.sessionIds)) as Array<{ n: number }>)[0]!.n,
    );
    expect(n).toBe(bobMessagesBefore);
    const found = dataOf(await bob.client.http<{ searchMemories: Array<{ memory: { id: string } | null }> }, unknown>(SEARCH, { query: 'green tea' })).searchMemories;
    expect(found.map((h) => h.memory?.id)).toContain(bob.memoryId);
    expect((await scanTables(t, [bob.user.id])).length).toBeGreaterThan(5);
  });

  it('is idempotent', async () => {
    const again = dataOf(await owner.http<{ eraseUser: { existed: boolean; rows: number } }, unknown>(ERASE, { userId: people.ada.user.id })).eraseUser;
    expect(again).toMatchObject({ existed: false, rows: 0 });
    const sys = t.app.systemCtx('test');
    expect(await t.app.db.repo(sys, AuditEntry).countBy({ action: 'user.erase' })).toBe(1);
  });

  it("lets the erased user's identity pair again as a new sender", async () => {
    const ada = people.ada;
    await startFakeTransport(t.app, 'telegram');
    const sys = t.app.systemCtx('test');
    expect(await t.app.services.users.findByIdentity(sys, 'telegram', ada.handle)).toBeNull();
    await handle(t.app, inbound('telegram', ada.handle, 'hello again'));
    const requests = await t.app.db.repo(sys, PairingRequest).findBy({ channel: 'telegram', handle: ada.handle });
    expect(requests).toEqual([expect.objectContaining({ status: 'PENDING', userId: null })]);
  });

  it('lets a user erase themself; the last OWNER cannot be erased', async () => {
    const bob = people.bob;
    const self = dataOf(await bob.client.http<{ eraseUser: { existed: boolean } }, unknown>(ERASE, { userId: bob.user.id })).eraseUser;
    expect(self.existed).toBe(true);
    expect(await scanTables(t, [bob.user.id, bob.marker])).toEqual([]);
    // Their token went with them.
    expect((await bob.client.http(ERASE, { userId: bob.user.id })).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const ownerId = (await t.app.services.users.listAll(t.app.systemCtx('test'))).find((u) => u.trust === 'OWNER')!.id;
    expect((await owner.http(ERASE, { userId: ownerId })).errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });
});

describe('muninn users export | erase', () => {
  it('exports through the running server and erases after asking', async () => {
    const cy = await createUserWithToken(owner, TrustLevel.MEMBER, 'Cy');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-cli-export-'));
    try {
      const out = path.join(dir, 'cy.tar.gz');
      const env = { MUNINN_TOKEN: t.ownerToken };
      const exported = await runCli(['users', 'export', cy.id, '--url', t.url, '--out', out], { env });
      expect(exported.stderr).toBe('');
      expect(exported).toMatchObject({ code: 0, stdout: `Export of ${cy.id} written to ${out}\n` });
      const x = path.join(dir, 'x');
      mkdirSync(x);
      await tar.extract({ file: out, cwd: x } as tar.TarOptionsWithAliasesAsyncFile);
      expect(JSON.parse(readFileSync(path.join(x, 'profile.json'), 'utf8'))).toMatchObject({ id: cy.id, displayName: 'Cy' });

      const declined = await runCli(['users', 'erase', cy.id, '--url', t.url], { env, stdin: 'n\n' });
      expect(declined.code).toBe(1);
      expect(await t.app.services.users.findOne(t.app.systemCtx('test'), cy.id)).not.toBeNull();
      const erased = await runCli(['users', 'erase', cy.id, '--url', t.url, '--yes'], { env });
      expect(erased.stderr).toBe('');
      expect(erased.code).toBe(0);
      expect(erased.stdout).toMatch(new RegExp(`^Erased ${cy.id}: \\d+ rows \\(.*users 1.*\\); `));
      expect(await scanTables(t, [cy.id])).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
