/**
 * Security suite, documents (issue 27), beside document-uploads.e2e.test.ts with its own caps: a Word file
 * whose zip directory lies about its sizes (declared 4 KB, inflates to 64 MB) ends FAILED with its reason
 * and the server goes on; text over `documents.max_text_chars` ends FAILED with a reason that names the
 * cap, whatever the format (nothing is indexed, nothing truncated silently); and a user asking
 * `jobProgress` for another user's ingest job is refused exactly as for a job that does not exist.
 */
import { startTestApp, type TestApp } from '../../support/test-app';
import { createUserWithToken } from '../../support/chat-helpers';
import type { GraphQLTestClient } from '../../support/graphql-client';
import { buildDocx, buildLongPdf, buildLyingSizeDocx } from '../../support/document-files';
import { addDocument, settled } from '../../support/document-helpers';

const MAX_TEXT_CHARS = 5000;
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const JOB_PROGRESS = `subscription JobProgress($jobId: ID!) { jobProgress(jobId: $jobId) { jobId queue state percent } }`;

let t: TestApp;
let ada: { id: string; token: string; client: GraphQLTestClient };
let bob: { id: string; token: string; client: GraphQLTestClient };

beforeAll(async () => {
  t = await startTestApp({ config: { documents: { max_bytes: 4 * 1024 * 1024, max_text_chars: MAX_TEXT_CHARS }, log: { level: 'warn' } } });
  const owner = t.client(t.ownerToken);
  const a = await createUserWithToken(owner, 'Ada', 'MEMBER');
  const b = await createUserWithToken(owner, 'Bob', 'MEMBER');
  await owner.close();
  ada = { ...a, client: t.client(a.token) };
  bob = { ...b, client: t.client(b.token) };
});
afterAll(async () => {
  await ada?.client.close();
  await bob?.client.close();
  await t?.close();
});

async function chunksOf(documentId: string): Promise<number> {
  const [row] = await t.app.dataSource.query(`SELECT COUNT(*) AS n FROM document_chunks WHERE "documentId" = '${documentId}'`);
  return Number(row.n);
}

it('a Word file whose zip lies about its sizes ends FAILED with its reason; the server goes on', async () => {
  const lying = buildLyingSizeDocx(64);
  expect(lying.length).toBeLessThan(1024 * 1024); // small on the wire, huge once inflated
  const doc = await settled(ada.client, (await addDocument(ada.client, 'innocent.docx', lying, DOCX)).id, 120_000);
  expect(doc).toMatchObject({ status: 'FAILED', chunkCount: 0 });
  // The unzipper checks what each entry inflates to against what it declares.
  expect(doc.error).toBe('the Word file is damaged or forged (a zip entry unpacks to another size than it declares)');
  expect(await chunksOf(doc.id)).toBe(0);
  const good = await settled(ada.client, (await addDocument(ada.client, 'after.docx', await buildDocx([{ heading: 'After', paragraphs: ['Still reading files.'] }]), DOCX)).id);
  expect(good.status).toBe('READY');
}, 180_000);

it('text over documents.max_text_chars ends FAILED with a reason naming the cap, in every format', async () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');
  const cases: Array<[string, string, Buffer]> = [
    ['long.txt', 'text/plain', Buffer.from(words(1500))],
    ['long.md', 'text/markdown', Buffer.from(`# Long\n\n${words(1500)}`)],
    ['long.docx', DOCX, await buildDocx([{ heading: 'Long', paragraphs: [words(800), words(800)] }])],
    ['long.pdf', 'application/pdf', await buildLongPdf(120)],
  ];
  for (const [name, type, data] of cases) {
    const doc = await settled(ada.client, (await addDocument(ada.client, name, data, type)).id);
    expect({ name, status: doc.status, chunks: doc.chunkCount }).toEqual({ name, status: 'FAILED', chunks: 0 });
    expect(doc.error).toMatch(new RegExp(`more than ${MAX_TEXT_CHARS} characters of text \\(documents\\.max_text_chars\\)`));
    expect(await chunksOf(doc.id)).toBe(0);
  }
  // Just under the cap is read in full.
  const fits = await settled(ada.client, (await addDocument(ada.client, 'fits.txt', Buffer.from(words(400)), 'text/plain')).id);
  expect(fits).toMatchObject({ status: 'READY', error: null });
}, 180_000);

it("refuses jobProgress on another user's ingest job exactly as on a job that does not exist", async () => {
  const added = await addDocument(ada.client, 'private-plan.md', Buffer.from('# Plan\n\nThe surprise party is on Friday.'), 'text/markdown');
  expect(added.jobId).toBeTruthy();
  const follow = (client: GraphQLTestClient, jobId: string) =>
    new Promise<{ data: unknown; errors: Array<{ message: string; extensions?: { code?: string } }> }>((resolve, reject) => {
      let data: unknown = null;
      client.wsClient().subscribe<unknown>(
        { query: JOB_PROGRESS, variables: { jobId } },
        {
          next: (v) => {
            if (v.errors) resolve({ data: v.data ?? data, errors: v.errors as never });
            else data = v.data;
          },
          error: (err) => (Array.isArray(err) ? resolve({ data, errors: err as never }) : reject(err instanceof Error ? err : new Error(JSON.stringify(err)))),
          complete: () => resolve({ data, errors: [] }),
        },
      );
    });
  const others = await follow(bob.client, added.jobId!);
  const missing = await follow(bob.client, `${added.jobId}-nope`);
  expect(others.data).toBeNull();
  expect(others.errors[0]?.extensions?.code).toBe('FORBIDDEN');
  // Same answer as for a job that does not exist: nothing tells Bob the job is there, or whose it is.
  expect(others.errors.map((e) => [e.message, e.extensions?.code])).toEqual(missing.errors.map((e) => [e.message, e.extensions?.code]));
  expect(JSON.stringify(others)).not.toMatch(/private-plan|surprise|Ada/);
  // Ada follows her own job.
  const mine = await follow(ada.client, added.jobId!);
  expect(mine.errors).toEqual([]);
  expect(await settled(ada.client, added.id)).toMatchObject({ status: 'READY' });
}, 60_000);
