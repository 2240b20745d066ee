/**
 * Issue 27: documents on the LanceDB store (`memory.vector_store: lancedb`). Passages are indexed in the
 * same store as memories, a question brings the passage to the model with its citation, another user
 * never finds it, and deleting the document takes its passages out of the store.
 */
import { startTestApp, type TestApp } from '../../support/test-app';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { DeleteDocumentDocument, SearchKnowledgeDocument } from '../../support/graphql/generated';
import { buildPdf } from '../../support/document-files';
import { addDocument, settled } from '../../support/document-helpers';

let t: TestApp;
let model: FakeOpenAIServer;
let ada: GraphQLTestClient;
let bob: GraphQLTestClient;

beforeAll(async () => {
  model = await FakeOpenAIServer.start({ chunks: 1 });
  t = await startTestApp({
    config: { memory: { vector_store: 'lancedb' }, log: { level: 'warn' }, ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 16384 } } } },
  });
  await t.app.services.memory.ready;
  const owner = t.client(t.ownerToken);
  ada = t.client((await createUserWithToken(owner, 'Ada', 'MEMBER')).token);
  bob = t.client((await createUserWithToken(owner, 'Bob', 'MEMBER')).token);
  await owner.close();
});
afterAll(async () => {
  await ada?.close();
  await bob?.close();
  await t?.close();
  await model?.close();
});

const search = async (client: GraphQLTestClient, query: string) => dataOf(await client.http(SearchKnowledgeDocument, { query, limit: 5 })).searchMemories;

it('a PDF is indexed in LanceDB, recalled with its citation for its owner only, and gone from the store once deleted', async () => {
  expect(t.app.services.memory.store.name).toBe('lancedb');
  const pdf = await buildPdf(['Garden notes\nThe roses were planted in April.', 'Watering\nThe greenhouse tap code is TAP-4471-LIMA.']);
  const doc = await settled(ada, (await addDocument(ada, 'garden.pdf', pdf, 'application/pdf')).id);
  expect(doc).toMatchObject({ status: 'READY', pages: 2 });

  const hits = await search(ada, 'greenhouse tap code');
  expect(hits[0]?.document).toMatchObject({ documentId: doc.id, documentName: 'garden.pdf', page: 2 });
  expect((await search(bob, 'greenhouse tap code TAP-4471-LIMA')).filter((h) => h.document?.documentId === doc.id)).toEqual([]);

  const before = model.chatRequests().length;
  await send(ada, 'What is the greenhouse tap code?');
  await eventually(() => model.chatRequests().length > before, 20_000, 'the model call');
  expect(JSON.stringify(model.chatRequests().at(-1)?.body?.messages ?? [])).toMatch(/garden\.pdf, p\. 2\] [^"]*TAP-4471-LIMA/);

  expect(dataOf(await ada.http(DeleteDocumentDocument, { id: doc.id })).deleteDocument).toBe(true);
  expect((await search(ada, 'greenhouse tap code TAP-4471-LIMA')).filter((h) => h.document?.documentId === doc.id)).toEqual([]);
  const entries = await t.app.services.memory.store.entries(t.app.systemCtx('test'));
  expect([...entries.keys()].filter((id) => id.includes(doc.id))).toEqual([]);
});
