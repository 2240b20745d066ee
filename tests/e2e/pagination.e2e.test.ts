/** Relay connections (DESIGN §7): `first`/`after` walk every row once, in order, with a stable totalCount. */
import { dataOf, type GraphQLTestClient } from '../support/graphql-client';
import {
  MeDocument,
  MemoriesDocument,
  MessagesDocument,
  SessionsDocument,
  type MemoriesQuery,
} from '../support/graphql/generated';
import { createMemoryFor, createUserWithToken, insertSession, type TestUser } from '../support/fixtures';
import { Message, MessageRole, MessageStatus } from '../../server/modules/sessions';
import { startTestApp, type TestApp } from '../support/test-app';
import { countSqlStatements } from '../support/sql-statement-counter';
import { testDatabaseBase } from '../support/test-database';

let t: TestApp;
let owner: GraphQLTestClient;
let member: TestUser;
let memberClient: GraphQLTestClient;
const memoryIds: string[] = [];

beforeAll(async () => {
  t = await startTestApp();
  owner = t.client(t.ownerToken);
  member = await createUserWithToken(owner, 'MEMBER');
  memberClient = t.client(member.token);
  for (let i = 0; i < 7; i++) memoryIds.push(await createMemoryFor(owner, member.id, `memory ${i}`));
  // Someone else's memories must not show up in the member's pages or counts.
  const ownerId = dataOf(await owner.http(MeDocument)).me.id;
  for (let i = 0; i < 3; i++) await createMemoryFor(owner, ownerId, `owner memory ${i}`);
});

afterAll(async () => {
  await Promise.all([owner.close(), memberClient.close()]);
  await t.close();
});

it('memories: pages of 3 cover all 7 rows newest first, over HTTP and WebSocket alike', async () => {
  for (const via of ['http', 'wsRun'] as const) {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const page: MemoriesQuery['memories'] = dataOf(
        await memberClient[via](MemoriesDocument, { first: 3, after }),
      ).memories;
      pages += 1;
      expect(page.totalCount).toBe(7);
      seen.push(...page.edges.map((e) => e.node.id));
      if (!page.pageInfo.hasNextPage) break;
      expect(page.pageInfo.endCursor).toBe(page.edges[page.edges.length - 1]!.cursor);
      after = page.pageInfo.endCursor;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([...memoryIds].reverse());
  }
});

it('first: 0 returns no edges but the count and whether there is more', async () => {
  const page = dataOf(await memberClient.http(MemoriesDocument, { first: 0 })).memories;
  expect(page).toMatchObject({ totalCount: 7, edges: [], pageInfo: { hasNextPage: true, endCursor: null } });
});

it('the cursor of the last row gives an empty last page', async () => {
  const all = dataOf(await memberClient.http(MemoriesDocument, { first: 7 })).memories;
  expect(all.pageInfo.hasNextPage).toBe(false);
  const after = all.edges[6]!.cursor;
  const rest = dataOf(await memberClient.http(MemoriesDocument, { after })).memories;
  expect(rest.edges).toEqual([]);
  expect(rest.pageInfo).toEqual({ hasNextPage: false, endCursor: null });
});

it('messages: oldest first, paged', async () => {
  const { sessionId } = await insertSession(t, member.id, 'message 0');
  const repo = t.app.db.repo(t.app.systemCtx('test'), Message);
  for (let i = 1; i < 5; i++) {
    await repo.save(
      repo.create({
        sessionId,
        userId: member.id,
        role: MessageRole.USER,
        content: `message ${i}`,
        status: MessageStatus.DONE,
        dedupeKey: null,
        replyToId: null,
        turnId: null,
        toolCalls: null,
        toolCallId: null,
      }),
    );
  }
  const first = dataOf(await memberClient.http(MessagesDocument, { sessionId, first: 2 })).messages;
  expect(first.totalCount).toBe(5);
  expect(first.edges.map((e) => e.node.content)).toEqual(['message 0', 'message 1']);
  const second = dataOf(
    await memberClient.http(MessagesDocument, { sessionId, first: 2, after: first.pageInfo.endCursor }),
  ).messages;
  expect(second.edges.map((e) => e.node.content)).toEqual(['message 2', 'message 3']);
  const sessions = dataOf(await memberClient.http(SessionsDocument, {})).sessions;
  expect(sessions.edges.map((e) => e.node)).toEqual([
    expect.objectContaining({
      id: sessionId,
      userId: member.id,
      user: { id: member.id, displayName: member.displayName },
    }),
  ]);
});

it('sessions: the rows are counted only when the query selects totalCount (in a fragment too), with the same count', async () => {
  const post = async (query: string) => {
    const res = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${member.token}` }, body: JSON.stringify({ query }) });
    return (await res.json()) as { data: { sessions: Record<string, unknown> }; errors?: unknown };
  };
  const sql = countSqlStatements();
  const counted = () => [...sql.counts].filter(([text]) => /COUNT\(/i.test(text) && /sessions/.test(text)).reduce((n, [, c]) => n + c, 0);
  try {
    const withCount = await post('{ sessions(first: 1) { totalCount edges { node { id } } } }');
    const onSqlite = testDatabaseBase() === null;
    if (onSqlite) expect(counted()).toBe(1);
    sql.reset();
    for (let i = 0; i < 4; i++) {
      const without = await post('{ sessions(first: 1) { edges { node { id } } pageInfo { hasNextPage } } }');
      expect(without.errors).toBeUndefined();
      expect(without.data.sessions).not.toHaveProperty('totalCount');
      expect(without.data.sessions.edges).toEqual(withCount.data.sessions.edges);
    }
    if (onSqlite) expect(counted()).toBe(0);
    const viaFragment = await post('{ sessions(first: 1) { ...Total } } fragment Total on SessionConnection { totalCount }');
    expect(viaFragment.data.sessions.totalCount).toBe(withCount.data.sessions.totalCount);
    expect(withCount.data.sessions.totalCount).toBeGreaterThan(0);
    if (onSqlite) expect(counted()).toBe(1);
  } finally {
    sql.stop();
  }
});
