/**
 * Security suite, documents (issue 27 acceptance 3): every bad file — encrypted PDF, damaged PDF, scanned
 * PDF without a text layer, a DOCX zip bomb, files whose type lies, a PDF over the page cap — ends FAILED with its reason, never a
 * 5xx or a crash, and the server goes on (a good file afterwards is READY); a turn is answered while a
 * 500-page PDF ingests (extraction runs on its own thread; the event loop stays free). Hostile uploads:
 * `POST /uploads` without or with a bad token, as a GUEST, not multipart, of an unsupported type, over the
 * size cap, with a path in the file name; `addDocument` with bad base64 or a scope above the caller.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import type { GraphQLTestClient } from '../../support/graphql-client';
import { AddDocumentDocument } from '../../support/graphql/generated';
import { buildCorruptPdf, buildDocx, buildEncryptedPdf, buildLongPdf, buildPdf, buildScannedPdf, buildZip, buildZipBombDocx, pngBytes } from '../../support/document-files';
import { addDocument, documentById, settled, upload } from '../../support/document-helpers';

const MAX_BYTES = 2 * 1024 * 1024;

let t: TestApp;
let model: FakeOpenAIServer;
let member: { id: string; token: string; client: GraphQLTestClient };
let guest: { id: string; token: string };

beforeAll(async () => {
  model = await FakeOpenAIServer.start({ chunks: 1 });
  t = await startTestApp({
    config: {
      ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 2 } } },
      documents: { max_bytes: MAX_BYTES },
      log: { level: 'warn' },
    },
  });
  const owner = t.client(t.ownerToken);
  const m = await createUserWithToken(owner, 'Mallory', 'MEMBER');
  member = { ...m, client: t.client(m.token) };
  guest = await createUserWithToken(owner, 'Guest', 'GUEST');
  await owner.close();
  // A first turn loads what every turn needs once (token counting), so the figures below are the steady state.
  await send(member.client, 'warm up');
  await eventually(() => model.chatRequests().length > 0, 20_000, 'the warm-up turn');
});
afterAll(async () => {
  await member?.client.close();
  await t?.close();
  await model?.close();
});

it('a turn is answered while a 500-page PDF ingests, and the event loop stays free', async () => {
  const pdf = await buildLongPdf(500);
  const doc = await addDocument(member.client, 'report-500.pdf', pdf, 'application/pdf');
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  await eventually(async () => (await documentById(member.client, doc.id)).status !== 'QUEUED', 20_000, 'the ingestion to start');
  const before = model.chatRequests().length;
  await send(member.client, 'Hello, are you there?');
  await eventually(() => model.chatRequests().length > before, 20_000, 'the turn');
  // The turn got its model call while the document was still being read.
  expect((await documentById(member.client, doc.id)).status).not.toBe('READY');
  const ready = await settled(member.client, doc.id, 120_000);
  delay.disable();
  expect(ready).toMatchObject({ status: 'READY', pages: 500 });
  expect(ready.chunkCount).toBeGreaterThanOrEqual(500);
  // Extraction ran off the event loop: no stall of a second (indexing 500 passages runs in small steps).
  expect(delay.max / 1e6).toBeLessThan(1000);
}, 180_000);

it('each bad file ends FAILED with its reason; the server goes on', async () => {
  const cases: Array<[string, string, Buffer, RegExp]> = [
    ['locked.pdf', 'application/pdf', await buildEncryptedPdf(), /encrypted \(password-protected\)/],
    ['broken.pdf', 'application/pdf', buildCorruptPdf(), /damaged or not a PDF/],
    ['scan.pdf', 'application/pdf', await buildScannedPdf(), /no text layer/],
    ['bomb.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', buildZipBombDocx(40), /zip bomb/],
    ['photo.pdf', 'application/pdf', pngBytes(), /type is wrong.*PNG image/],
    ['notes.txt', 'text/plain', await buildPdf(['I am a PDF in disguise.']), /type is wrong.*is a PDF/],
    ['letter.docx', '', buildZip([{ name: 'hello.txt', data: Buffer.from('hi') }]), /not a Word document/],
    ['memo.docx', '', Buffer.from('Just some text pretending to be Word.'), /type is wrong.*not one/],
    // One page over documents.max_pages (500): refused once the page count is read, before any text.
    ['long.pdf', 'application/pdf', await buildLongPdf(501), /has 501 pages; at most 500 are read \(documents\.max_pages\)/],
  ];
  const ids: string[] = [];
  for (const [name, type, data] of cases) {
    const res = await member.client.http(AddDocumentDocument, { input: { name, mimeType: type || null, contentBase64: data.toString('base64') } });
    expect(res.status).toBe(200);
    expect(res.errors).toBeUndefined();
    ids.push(res.data!.addDocument.id);
  }
  // One more through /uploads.
  const up = await upload(t.url, member.token, { name: 'locked-upload.pdf', type: 'application/pdf', data: await buildEncryptedPdf() });
  expect(up.status).toBe(201);
  for (const [i, [name, , , reason]] of cases.entries()) {
    const doc = await settled(member.client, ids[i]!);
    expect({ name, status: doc.status, chunks: doc.chunkCount }).toEqual({ name, status: 'FAILED', chunks: 0 });
    expect(doc.error).toMatch(reason);
  }
  expect((await settled(member.client, up.body.id!)).error).toMatch(/encrypted/);
  const good = await settled(member.client, (await addDocument(member.client, 'fine.docx', await buildDocx([{ heading: 'Fine', paragraphs: ['All is well.'] }]))).id);
  expect(good.status).toBe('READY');
  const [row] = await t.app.dataSource.query(`SELECT COUNT(*) AS n FROM document_chunks WHERE "documentId" IN (${ids.map((id) => `'${id}'`).join(', ')})`);
  expect(Number(row.n)).toBe(0);
}, 180_000);

describe('hostile uploads', () => {
  const md = { name: 'note.md', type: 'text/markdown', data: Buffer.from('# Note\n\nA small note.') };
  const incoming = () => {
    try {
      return readdirSync(path.join(t.dataDir, 'documents', 'incoming'));
    } catch {
      return [];
    }
  };

  it('refuses missing and bad tokens (401), GUESTs (403), non-multipart bodies and unsupported types (415)', async () => {
    expect((await upload(t.url, null, md)).status).toBe(401);
    const bad = await upload(t.url, 'not-a-token', md);
    expect(bad.status).toBe(401);
    expect(bad.body.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    const g = await upload(t.url, guest.token, md);
    expect(g.status).toBe(403);
    expect(g.body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    const json = await fetch(`${t.url}/uploads`, { method: 'POST', headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' }, body: '{"file":"x"}' });
    expect(json.status).toBe(415);
    const exe = await upload(t.url, member.token, { name: 'setup.exe', type: 'application/x-msdownload', data: Buffer.from('MZ....') });
    expect(exe.status).toBe(415);
    expect(exe.body.errors?.[0]?.message).toMatch(/Unsupported type.*setup\.exe/);
  });

  it('cuts off a file over documents.max_bytes (413) and leaves nothing behind', async () => {
    const big = await upload(t.url, member.token, { name: 'huge.txt', type: 'text/plain', data: Buffer.alloc(MAX_BYTES + 100_000, 0x61) });
    expect(big.status).toBe(413);
    expect(big.body.errors?.[0]?.extensions.code).toBe('PAYLOAD_TOO_LARGE');
    expect(incoming()).toEqual([]);
  });

  it('strips paths from file names and refuses broken multipart bodies (400)', async () => {
    const sneaky = await upload(t.url, member.token, { name: '../../../etc/passwd.md', type: 'text/markdown', data: md.data });
    expect(sneaky.status).toBe(201);
    const doc = await documentById(member.client, sneaky.body.id!);
    expect(doc.name).toBe('passwd.md');
    expect(readdirSync(path.join(t.dataDir, 'documents')).sort()).toContain(sneaky.body.id);
    const broken = await fetch(`${t.url}/uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.token}`, 'content-type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.md"\r\n\r\nunterminated',
    });
    expect(broken.status).toBe(400);
    const empty = await fetch(`${t.url}/uploads`, { method: 'POST', headers: { authorization: `Bearer ${member.token}`, 'content-type': 'multipart/form-data; boundary=xyz' }, body: '--xyz--\r\n' });
    expect(empty.status).toBe(400);
    expect(incoming()).toEqual([]);
  });

  it('addDocument refuses bad base64, oversized content and scopes above the caller, with codes', async () => {
    const add = (input: Record<string, unknown>) => member.client.http(AddDocumentDocument, { input: { name: 'x.md', contentBase64: 'aGVsbG8=', ...input } as never });
    expect((await add({ contentBase64: '!!!not base64!!!' })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await add({ scope: 'GLOBAL' })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await add({ scope: 'GROUP', groupId: 'agent:main:telegram:group:1' })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await add({ contentBase64: '' })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const anon = await t.client(null).http(AddDocumentDocument, { input: { name: 'x.md', contentBase64: 'aGVsbG8=' } });
    expect(anon.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
