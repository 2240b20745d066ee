/**
 * Defects found by trying the server from outside (issue 12), each pinned here: a subscription sent over
 * HTTP, clients hanging up mid-body, a graphql-ws client sending a server-only message, usage of someone
 * else, a full page of max_page_size within the cost limit, and introspection without a token.
 */
import net from 'node:net';
import WebSocket from 'ws';
import { dataOf, type GqlError } from '../../support/graphql-client';
import { MeDocument } from '../../support/graphql/generated';
import { createUserWithToken, insertSession, type TestUser } from '../../support/fixtures';
import { startTestApp, type TestApp } from '../../support/test-app';

let t: TestApp;
let member: TestUser;
let other: TestUser;
let sessionId: string;

async function post(query: string, token: string | null = t.ownerToken, variables?: unknown, app: TestApp = t) {
  const res = await fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, json: (await res.json()) as { data?: Record<string, unknown> | null; errors?: GqlError[] } };
}

const ELEVEN_FIELDS = 'id sessionId userId role content status createdAt updatedAt inputTokens outputTokens turnId';
const DEEP_INTROSPECTION = `{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } } } }`;

beforeAll(async () => {
  t = await startTestApp({ workers: false, config: { log: { level: 'debug' } } });
  const owner = t.client(t.ownerToken);
  member = await createUserWithToken(owner, 'MEMBER');
  other = await createUserWithToken(owner, 'MEMBER');
  sessionId = (await insertSession(t, member.id)).sessionId;
});

afterAll(async () => {
  await t.close();
});

describe('subscriptions over HTTP', () => {
  it('a subscription sent with POST is a 400 BAD_REQUEST that points to WebSocket, not an internal error', async () => {
    const { status, json } = await post(`subscription { sessionEvents(sessionId: "${sessionId}") { __typename } }`);
    expect(status).toBe(400);
    expect(json.errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_REQUEST' } })]);
    expect(json.errors?.[0]?.message).toMatch(/WebSocket/);
    expect(t.logs.text).not.toMatch(/Cannot return null|"level":50/);
  });
});

describe('clients that hang up', () => {
  it('a client hanging up mid-body is not logged as an error, and the server keeps serving', async () => {
    const port = Number(new URL(t.url).port);
    for (let i = 0; i < 10; i++) {
      await new Promise<void>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write('POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"query":"{ me');
          // Wait until the server has read the partial body, then vanish.
          setImmediate(() => setTimeout(() => socket.destroy(), 20));
        });
        socket.on('close', () => resolve());
        socket.on('error', reject);
      });
    }
    // A full request after the hang-ups: answered, so the aborted ones have all been handled before it.
    expect(dataOf(await t.client(t.ownerToken).http(MeDocument)).me.id).toBeTruthy();
    const aborted = t.logs.entries().filter((e) => /abort/i.test(JSON.stringify(e)));
    expect(aborted.length).toBeGreaterThanOrEqual(1);
    for (const line of aborted) {
      expect(line).toMatchObject({ level: 20, msg: 'HTTP request refused', type: 'request.aborted' });
      expect(JSON.stringify(line)).not.toMatch(/stack|\\n\s+at /);
    }
  });

  it('a graphql-ws client sending connection_ack (a server message) is closed with 4400, not 4500', async () => {
    const closes: Array<[number, string]> = [];
    for (const type of ['connection_ack', 'next', 'error']) {
      const socket = new WebSocket(`${t.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
      await new Promise((resolve, reject) => {
        socket.once('open', resolve);
        socket.once('error', reject);
      });
      const closed = new Promise<[number, string]>((resolve) => socket.on('close', (code, reason) => resolve([code, reason.toString()])));
      socket.send(JSON.stringify({ type, id: '1', payload: {} }));
      closes.push(await closed);
    }
    expect(closes.map(([code]) => code)).toEqual([4400, 4400, 4400]);
    expect(closes[0]![1]).toMatch(/connection_ack/);
    expect(t.logs.text).not.toMatch(/"level":50/);
  });
});

describe('usage of someone else', () => {
  it('a MEMBER asking for another user’s usage gets FORBIDDEN, like sessions and memories', async () => {
    const range = 'from: "2020-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z"';
    const theirs = await post(`{ usage(${range}, userId: "${other.id}") { key calls } }`, member.token);
    expect(theirs.json.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const sessions = await post(`{ sessions(filter: { userId: "${other.id}" }) { totalCount } }`, member.token);
    expect(sessions.json.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const own = await post(`{ usage(${range}, userId: "${member.id}") { key } }`, member.token);
    expect(own.json.errors).toBeUndefined();
    const admin = await post(`{ usage(${range}, userId: "${other.id}") { key } }`);
    expect(admin.json.errors).toBeUndefined();
  });
});

describe('graphql.max_page_size and graphql.max_cost agree', () => {
  it('a full page of max_page_size (200) messages with 11 fields is within the default cost limit', async () => {
    const { status, json } = await post(
      `{ messages(sessionId: "${sessionId}", first: 200) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ${ELEVEN_FIELDS} } } } }`,
      member.token,
    );
    expect(status).toBe(200);
    expect(json.errors).toBeUndefined();
    expect((json.data?.messages as { totalCount: number }).totalCount).toBe(1);
  });

  it('a variable page size counts as max_page_size, and three full pages at once are refused with the cost', async () => {
    const viaVariable = await post(
      `query ($n: Int) { messages(sessionId: "${sessionId}", first: $n) { edges { node { ${ELEVEN_FIELDS} } } } }`,
      member.token,
      { n: 200 },
    );
    expect(viaVariable.json.errors).toBeUndefined();
    const three = [1, 2, 3].map((i) => `m${i}: messages(sessionId: "${sessionId}", first: $n) { edges { node { ${ELEVEN_FIELDS} } } }`).join(' ');
    const refused = await post(`query ($n: Int) { ${three} }`, member.token, { n: 1 });
    expect(refused.status).toBe(400);
    expect(refused.json.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(refused.json.errors?.[0]?.message).toMatch(/cost \d+ is above the limit of 5000 \(graphql\.max_cost\)/);
  });

  it('a page above max_page_size is refused by the field with a clear BAD_USER_INPUT', async () => {
    const { json } = await post(`{ messages(sessionId: "${sessionId}", first: 201) { edges { node { id } } } }`, member.token);
    expect(json.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(json.errors?.[0]?.message).toMatch(/between 0 and 200/);
  });
});

describe('introspection', () => {
  it('outside production it is answered without a token, and it is exempt from max_depth', async () => {
    const { status, json } = await post(DEEP_INTROSPECTION, null);
    expect(status).toBe(200);
    expect(json.errors).toBeUndefined();
  });

  it('with graphql.public_introspection off, an anonymous caller gets 401 UNAUTHENTICATED and a token still may', async () => {
    const closed = await startTestApp({ workers: false, config: { graphql: { public_introspection: false } } });
    try {
      const anonymous = await post('{ __schema { queryType { name } } }', null, undefined, closed);
      expect(anonymous.status).toBe(401);
      expect(anonymous.json.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      const typeOnly = await post('{ __type(name: "User") { name } }', null, undefined, closed);
      expect(typeOnly.json.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      const withToken = await post(DEEP_INTROSPECTION, closed.ownerToken, undefined, closed);
      expect(withToken.json.errors).toBeUndefined();
      const anonymousWs = closed.client(null);
      const wsIntrospection = await anonymousWs.wsRun('{ __schema { queryType { name } } }' as never);
      await anonymousWs.close();
      expect(wsIntrospection.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect(wsIntrospection.errors?.[0]?.message).toMatch(/public_introspection/);
    } finally {
      await closed.close();
    }
  });
});
