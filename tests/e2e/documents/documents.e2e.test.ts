/**
 * Issue 27, acceptance 1: documents built in the test (PDF with pdf-lib, DOCX with docx, Markdown, HTML,
 * CSV, text) go in through `addDocument` and `POST /uploads`, are ingested on the `ingest` queue
 * (QUEUED → … → READY, progress through the row and jobProgress), and a question whose answer is on page 3
 * makes the model receive that passage with its citation. Also: searchMemories says which hits are
 * document passages, /docs lists them, reindexDocument and deleteDocument (chunks and index entries gone).
 */
import { startTestApp, type TestApp } from '../../support/test-app';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { DeleteDocumentDocument, DocumentsDocument, ReindexDocumentDocument, SearchKnowledgeDocument } from '../../support/graphql/generated';
import { buildDocx, buildPdf } from '../../support/document-files';
import { addDocument, settled, upload } from '../../support/document-helpers';

const JOB_PROGRESS = /* GraphQL */ `
  subscription JobProgress($jobId: ID!) { jobProgress(jobId: $jobId) { jobId queue state percent } }
`;

let t: TestApp;
let model: FakeOpenAIServer;
let ada: { id: string; token: string };
let client: GraphQLTestClient;

beforeAll(async () => {
  model = await FakeOpenAIServer.start({ chunks: 1 });
  t = await startTestApp({ config: { log: { level: 'warn' }, ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 16384, max_concurrency: 2 } } } } });
  const owner = t.client(t.ownerToken);
  ada = await createUserWithToken(owner, 'Ada', 'MEMBER');
  await owner.close();
  client = t.client(ada.token);
});
afterAll(async () => {
  await client?.close();
  await t?.close();
  await model?.close();
});

const lastPrompt = () => JSON.stringify(model.chatRequests().at(-1)?.body?.messages ?? []);

it('a PDF added with addDocument is READY with its pages, and the answer on page 3 reaches the model with its citation', async () => {
  const pdf = await buildPdf([
    'Boiler handbook\nThis handbook describes the heating system of the house.',
    'Chapter 1: Safety\nKeep the area around the boiler free of clutter at all times.',
    'Chapter 2: Service\nThe annual service of the boiler is done by Fjordvarme AS.\nThe boiler service code is QX-7731-KAPPA.',
    'Chapter 3: Troubleshooting\nIf the pressure drops below one bar, refill through the valve.',
  ]);
  const added = await addDocument(client, 'boiler-handbook.pdf', pdf, 'application/pdf');
  expect(added).toMatchObject({ name: 'boiler-handbook.pdf', status: 'QUEUED', scope: 'USER', sizeBytes: pdf.length });
  expect(added.jobId).toBeTruthy();
  const doc = await settled(client, added.id);
  expect(doc).toMatchObject({ status: 'READY', pages: 4, progress: 100, error: null, userId: ada.id });
  expect(doc.chunkCount).toBeGreaterThanOrEqual(4);

  const before = model.chatRequests().length;
  await send(client, 'What is the boiler service code?');
  await eventually(() => model.chatRequests().length > before, 20_000, 'the model call');
  const prompt = lastPrompt();
  expect(prompt).toContain('[boiler-handbook.pdf, p. 3]');
  expect(prompt).toMatch(/boiler-handbook\.pdf, p\. 3\] [^"]*QX-7731-KAPPA/);
  // Only the relevant pages are recalled, not the whole document.
  expect(prompt).not.toContain('refill through the valve');

  const hits = dataOf(await client.http(SearchKnowledgeDocument, { query: 'boiler service code', limit: 5 })).searchMemories;
  expect(hits[0]).toMatchObject({ source: 'DOCUMENT', memory: null, document: { documentId: added.id, documentName: 'boiler-handbook.pdf', page: 3, citation: 'boiler-handbook.pdf, p. 3' } });
  expect(hits[0]!.document!.content).toContain('QX-7731-KAPPA');
});

it('POST /uploads streams a Word file to disk; jobProgress follows the ingest job to 100', async () => {
  const docx = await buildDocx([
    { heading: 'Rental contract', paragraphs: ['Between the landlord and the tenants of flat 4B.'] },
    { heading: 'Rent', paragraphs: ['The monthly rent is 1420 EUR, due on the third working day.', 'The deposit is three months of rent.'] },
  ]);
  const res = await upload(t.url, ada.token, { name: 'lease.docx', type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', data: docx });
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({ status: 'QUEUED' });
  const updates: Array<{ state: string; percent: number | null }> = [];
  await new Promise<void>((resolve, reject) => {
    client.wsClient().subscribe<{ jobProgress: (typeof updates)[number] }>(
      { query: JOB_PROGRESS, variables: { jobId: res.body.jobId } },
      { next: (v) => (v.errors ? reject(new Error(JSON.stringify(v.errors))) : updates.push(v.data!.jobProgress)), error: reject, complete: resolve },
    );
  });
  expect(updates.at(-1)).toMatchObject({ state: 'COMPLETED', percent: 100 });
  const doc = await settled(client, res.body.id!);
  expect(doc).toMatchObject({ status: 'READY', pages: null, name: 'lease.docx' });
  const hits = dataOf(await client.http(SearchKnowledgeDocument, { query: 'monthly rent', limit: 3 })).searchMemories;
  expect(hits[0]!.document).toMatchObject({ documentName: 'lease.docx', heading: 'Rent', citation: 'lease.docx' });
  expect(hits[0]!.document!.content).toContain('1420 EUR');
});

it('reads Markdown, HTML, CSV and plain text; refuses other types with a clear message', async () => {
  const files: Array<[string, string, string, string]> = [
    ['notes.md', 'text/markdown', '# Garden\n\nThe tomatoes need watering every evening.\n\n## Shed\n\nThe shed key hangs behind the door.', 'shed key'],
    ['page.html', 'text/html', '<html><head><script>alert(1)</script></head><body><h1>Wifi</h1><p>The guest wifi password is <b>lingonberry42</b>.</p></body></html>', 'guest wifi password'],
    ['prices.csv', 'text/csv', 'item,price\ncoffee,3.20\ncroissant,2.40\nmarzipan cake,4.90', 'marzipan cake'],
    ['todo.txt', 'text/plain', 'Call the chimney sweep about the soot in March.', 'chimney sweep'],
  ];
  for (const [name, type, body, query] of files) {
    const doc = await settled(client, (await addDocument(client, name, Buffer.from(body), type)).id);
    expect({ name, status: doc.status, error: doc.error }).toEqual({ name, status: 'READY', error: null });
    const hits = dataOf(await client.http(SearchKnowledgeDocument, { query, limit: 3 })).searchMemories;
    expect(hits[0]?.document?.documentName).toBe(name);
  }
  const html = dataOf(await client.http(SearchKnowledgeDocument, { query: 'guest wifi password', limit: 1 })).searchMemories[0]!;
  expect(html.document!.content).toContain('lingonberry42');
  expect(html.document!.content).not.toContain('alert(1)');

  const refused = await client.http(DocumentsDocument, {});
  const before = dataOf(refused).documents.totalCount;
  const png = await client.http(AddDocumentPng, { input: { name: 'photo.png', mimeType: 'image/png', contentBase64: Buffer.from('not really').toString('base64') } });
  expect(png.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  expect(png.errors?.[0]?.message).toMatch(/Unsupported type.*photo\.png.*PDF, Word/);
  expect(dataOf(await client.http(DocumentsDocument, {})).documents.totalCount).toBe(before);
});

it('/docs lists the documents; reindexDocument reads again; deleteDocument removes chunks and index entries', async () => {
  const docs = await send(client, '/docs');
  expect(docs.reply).toContain('boiler-handbook.pdf — 4 p.');
  expect(docs.reply).toContain('lease.docx');

  const list = dataOf(await client.http(DocumentsDocument, { filter: { status: 'READY' } })).documents;
  const handbook = list.edges.map((e) => e.node).find((d) => d.name === 'boiler-handbook.pdf')!;
  const again = dataOf(await client.http(ReindexDocumentDocument, { id: handbook.id })).reindexDocument;
  expect(again.status).toBe('QUEUED');
  expect(again.jobId).not.toBe(handbook.jobId);
  expect(await settled(client, handbook.id)).toMatchObject({ status: 'READY', chunkCount: handbook.chunkCount });
  const count = async (sql: string) => Number((await t.app.dataSource.query(sql.replace('$ID', `'${handbook.id}'`)))[0].n);
  expect(await count('SELECT COUNT(*) AS n FROM document_chunks WHERE "documentId" = $ID')).toBe(handbook.chunkCount);
  expect(await count(`SELECT COUNT(*) AS n FROM memory_index WHERE "itemId" LIKE 'doc:' || $ID || ':%'`)).toBe(handbook.chunkCount);

  expect(dataOf(await client.http(DeleteDocumentDocument, { id: handbook.id })).deleteDocument).toBe(true);
  expect(await count('SELECT COUNT(*) AS n FROM document_chunks WHERE "documentId" = $ID')).toBe(0);
  expect(await count(`SELECT COUNT(*) AS n FROM memory_index WHERE "itemId" LIKE 'doc:' || $ID || ':%'`)).toBe(0);
  const hits = dataOf(await client.http(SearchKnowledgeDocument, { query: 'boiler service code QX-7731-KAPPA', limit: 5 })).searchMemories;
  expect(hits.filter((h) => h.document?.documentId === handbook.id)).toEqual([]);
  const gone = await client.http(DeleteDocumentDocument, { id: handbook.id });
  expect(gone.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
});

const AddDocumentPng = /* GraphQL */ `
  mutation AddPng($input: AddDocumentInput!) { addDocument(input: $input) { id } }
` as unknown as typeof import('../../support/graphql/generated').AddDocumentDocument;
