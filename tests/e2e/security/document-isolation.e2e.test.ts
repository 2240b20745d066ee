/**
 * Security suite, isolation of documents (issue 27 acceptance 2): user A's private document is never
 * recalled for B, nor in a group — not even A's own turns there; a group's collection is recalled only in
 * that group (not in another group, not in its members' DMs); and no GraphQL answer lets B reach A's
 * document (search, list, read, re-index, delete, follow its job).
 */
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { ChatRecorderServer } from '../../support/fakes/chat-recorder';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { DeleteDocumentDocument, DocumentByIdDocument, DocumentsDocument, LinkIdentityDocument, ReindexDocumentDocument, SearchKnowledgeDocument } from '../../support/graphql/generated';
import { buildPdf } from '../../support/document-files';
import { addDocument, settled } from '../../support/document-helpers';
import { registerRecorderChannel } from '../pipeline/pipeline-helpers';

const A_MARK = 'AMARK5521';
const B_MARK = 'BMARK7733';
const G_MARK = 'GMARK1199';
const GROUP = 'doc-iso-group-1';
const OTHER_GROUP = 'doc-iso-group-2';
const groupKey = (chatId: string) => `agent:main:telegram:group:${chatId}`;

let t: TestApp;
let model: FakeOpenAIServer;
let recorder: ChatRecorderServer;
let owner: GraphQLTestClient;
const users: Record<'a' | 'b', { id: string; token: string; client: GraphQLTestClient; docId?: string }> = {} as never;

beforeAll(async () => {
  model = await FakeOpenAIServer.start({ chunks: 1 });
  recorder = await ChatRecorderServer.start();
  t = await startTestApp({
    config: {
      ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 2 } } },
      channels: { telegram: { group_policy: 'open' } },
      log: { level: 'warn' },
    },
  });
  await registerRecorderChannel(t, 'telegram', recorder);
  owner = t.client(t.ownerToken);
  for (const name of ['a', 'b'] as const) {
    const u = await createUserWithToken(owner, `doc iso ${name}`, 'MEMBER');
    dataOf(await owner.http(LinkIdentityDocument, { input: { userId: u.id, channel: 'telegram', handle: `doc-iso-${name}` } }));
    users[name] = { ...u, client: t.client(u.token) };
  }
  const a = await addDocument(users.a.client, 'a-flat.pdf', await buildPdf([`Notes of the flat.`, `The alarm code of the flat is ${A_MARK}.`]));
  const b = await addDocument(users.b.client, 'b-flat.pdf', await buildPdf([`The alarm code of the flat is ${B_MARK}.`]));
  // The group's collection: added by an ADMIN for that group (chats add theirs by sending a file in the group).
  const g = await addDocument(owner, 'office.md', Buffer.from(`# Office\n\nThe alarm code of the office and the flat is ${G_MARK}.`), 'text/markdown', 'GROUP', groupKey(GROUP));
  users.a.docId = a.id;
  users.b.docId = b.id;
  for (const [client, id] of [[users.a.client, a.id], [users.b.client, b.id], [owner, g.id]] as const) expect((await settled(client, id)).status).toBe('READY');
}, 120_000);

afterAll(async () => {
  for (const u of Object.values(users)) await u.client.close();
  await owner?.close();
  await t?.close();
  await model?.close();
  await recorder?.close();
});

/** What the model was sent for the next turn that `act` starts. */
async function promptOf(act: () => Promise<unknown>): Promise<string> {
  const before = model.chatRequests().length;
  await act();
  await eventually(() => model.chatRequests().length > before, 20_000, 'the model call');
  return JSON.stringify(model.chatRequests()[before]!.body?.messages ?? []);
}

const inGroup = (chatId: string, who: 'a' | 'b', n: number) => () =>
  t.app.chat!.pipeline.handle({ channel: 'telegram', chatId, chatKind: 'group', sender: { handle: `doc-iso-${who}` }, text: `@muninn what is the alarm code of the flat? (${n})`, platformMessageId: `${chatId}-${who}-${n}`, mentionsBot: true });

it('a private document is recalled in its owner’s DM only', async () => {
  const aDm = await promptOf(() => send(users.a.client, 'What is the alarm code of the flat?'));
  expect(aDm).toContain(A_MARK);
  expect(aDm).toContain('[a-flat.pdf, p. 2]');
  expect(aDm).not.toContain(B_MARK);
  expect(aDm).not.toContain(G_MARK);
  const bDm = await promptOf(() => send(users.b.client, 'What is the alarm code of the flat?'));
  expect(bDm).toContain(B_MARK);
  expect(bDm).not.toContain(A_MARK);
  expect(bDm).not.toContain(G_MARK);
});

it('in a group nobody’s private document is recalled; the group’s collection is, and only there', async () => {
  for (const who of ['a', 'b'] as const) {
    const seen = await promptOf(inGroup(GROUP, who, 1));
    expect(seen).toContain(G_MARK);
    expect(seen).toContain('[office.md]');
    expect(seen).not.toContain(A_MARK);
    expect(seen).not.toContain(B_MARK);
  }
  const other = await promptOf(inGroup(OTHER_GROUP, 'a', 2));
  expect(other).toContain('alarm code');
  for (const mark of [A_MARK, B_MARK, G_MARK]) expect(other).not.toContain(mark);
});

it('GraphQL gives B nothing of A’s document', async () => {
  const b = users.b.client;
  const aId = users.a.docId!;
  const hits = dataOf(await b.http(SearchKnowledgeDocument, { query: `alarm code flat ${A_MARK}`, limit: 20 })).searchMemories;
  expect(JSON.stringify(hits)).not.toContain(A_MARK);
  expect(JSON.stringify(hits)).not.toContain(G_MARK);
  const listed = dataOf(await b.http(DocumentsDocument, {})).documents.edges.map((e) => e.node.id);
  expect(listed).toEqual([users.b.docId]);
  for (const res of [await b.http(DocumentByIdDocument, { id: aId }), await b.http(ReindexDocumentDocument, { id: aId }), await b.http(DeleteDocumentDocument, { id: aId })]) {
    expect(res.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  }
  const forOthers = await b.http(DocumentsDocument, { filter: { userId: users.a.id } });
  expect(forOthers.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  // A's document is untouched.
  expect(dataOf(await users.a.client.http(DocumentByIdDocument, { id: aId })).document.status).toBe('READY');
  // The group document is the ADMIN's: listed for them, not for the members.
  expect(dataOf(await users.a.client.http(DocumentsDocument, {})).documents.edges.map((e) => e.node.name)).toEqual(['a-flat.pdf']);
});
