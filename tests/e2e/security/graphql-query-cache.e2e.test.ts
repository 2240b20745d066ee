/**
 * Hostile clients against the cache of parsed and validated queries (server/http/graphql-fast-path.ts):
 * a flood of distinct queries, one user's query text sent by another, polluting variables, a query over
 * the depth limit sent again and again, and malformed bodies around a cached query. Each answer is the one
 * Apollo itself gives (forced with an `extensions` object, which only Apollo takes), and no answer is
 * ever another user's.
 */
import { startTestApp, type TestApp } from '../../support/test-app';
import { createUserWithToken } from '../../support/chat-helpers';

jest.setTimeout(90_000);

let t: TestApp;
let ann: { id: string; token: string };
let ben: { id: string; token: string };

beforeAll(async () => {
  t = await startTestApp({ config: { graphql: { max_depth: 4 } } });
  const owner = t.client(t.ownerToken);
  ann = await createUserWithToken(owner, 'Ann', 'MEMBER');
  ben = await createUserWithToken(owner, 'Ben', 'MEMBER');
  await owner.close();
});
afterAll(async () => {
  await t?.close();
});

async function post(body: unknown, token: string | null): Promise<{ status: number; body: string }> {
  const res = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: await res.text() };
}
const viaApollo = (payload: Record<string, unknown>, token: string | null) => post({ ...payload, extensions: {} }, token);

it('a cached query answers each user with their own data, never the one who sent it first', async () => {
  const me = { query: 'query Me { me { id displayName } }' };
  for (let i = 0; i < 3; i++) {
    expect(JSON.parse((await post(me, ann.token)).body).data.me.id).toBe(ann.id);
    expect(JSON.parse((await post(me, ben.token)).body).data.me.id).toBe(ben.id);
  }
  expect(await post(me, null)).toEqual(await viaApollo(me, null));
});

it('a flood of 700 distinct queries is answered correctly, and a query from before the flood still is', async () => {
  const first = { query: '{ me { id } }' };
  expect(JSON.parse((await post(first, ann.token)).body).data.me.id).toBe(ann.id);
  for (let i = 0; i < 700; i++) {
    const answer = await post({ query: `{ q${i}: me { id } }` }, ann.token);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).data[`q${i}`].id).toBe(ann.id);
  }
  expect(await post(first, ann.token)).toEqual(await viaApollo(first, ann.token));
});

it('polluting and mistyped variables on a cached query are answered as Apollo answers them', async () => {
  const page = { query: 'query Page($first: Int) { sessions(first: $first) { totalCount } }', variables: { first: 1 } };
  expect((await post(page, ann.token)).status).toBe(200);
  const polluted = '{"query":"query Page($first: Int) { sessions(first: $first) { totalCount } }","variables":{"__proto__":{"first":"x"},"constructor":{"prototype":{"admin":true}}}}';
  const answer = await post(polluted, ann.token);
  expect(answer).toEqual(await post(polluted.replace(/}$/, ',"extensions":{}}'), ann.token));
  expect(({} as Record<string, unknown>).admin).toBeUndefined();
  for (const variables of [{ first: '1' }, { first: 1e12 }, { first: [1] }, 'first=1']) {
    expect(await post({ ...page, variables }, ann.token)).toEqual(await viaApollo({ ...page, variables }, ann.token));
  }
});

it('a query over the depth limit is refused every time it is sent, as the first time', async () => {
  const deep = { query: '{ sessions(first: 1) { edges { node { user { identities { id } } } } } }' };
  const first = await post(deep, ann.token);
  expect(first.status).toBe(400);
  expect(first.body).toMatch(/depth/i);
  for (let i = 0; i < 3; i++) expect(await post(deep, ann.token)).toEqual(first);
  expect(first).toEqual(await viaApollo(deep, ann.token));
});

it('malformed bodies around a cached query get Apollo’s 4xx, never a 5xx', async () => {
  const me = '{ me { id } }';
  expect((await post({ query: me }, ann.token)).status).toBe(200);
  const bodies: unknown[] = [
    { query: me, operationName: 'Nope' },
    { query: me, operationName: 42 },
    { query: [me] },
    { query: me, variables: 'not an object' },
    { query: `${me} ${me}` },
    { query: 'subscription { sessionEvents(sessionId: "x") { __typename } }' },
    { query: 'mutation { __typename }', operationName: null },
    [{ query: me }],
  ];
  for (const body of bodies) {
    const answer = await post(body, ann.token);
    expect(answer.status).toBeLessThan(500);
    if (!Array.isArray(body)) expect(answer).toEqual(await viaApollo(body as Record<string, unknown>, ann.token));
  }
});

it('never runs a string of a query as code once the query is compiled (graphql-jit markers in every spelling)', async () => {
  // graphql-jit turns its marker strings back into code (server/graphql/compiled-query.ts keeps such
  // queries on graphql-js): markers in a variable default, a block string, an escape, and as a variable.
  const probe = globalThis as { muninnJitHostile?: number };
  const date = '__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d(globalThis.muninnJitHostile=1)';
  const nan = '__MAGIC_NAN__57f286b9_4c20_487f_b409_79804ddcb4f8';
  const payloads: Array<Record<string, unknown>> = [
    { query: `query ($k: String = "${date}") { sessions(filter: { key: $k }) { totalCount } }` },
    { query: `{ sessions(filter: { key: """${date}""" }) { totalCount } }` },
    { query: `{ sessions(filter: { key: "${date.replace('MAGIC', '\\u004DAGIC')}" }) { totalCount } }` },
    { query: `{ sessions(filter: { key: "${nan}" }) { totalCount } }` },
    { query: 'query ($k: String) { sessions(filter: { key: $k }) { totalCount } }', variables: { k: date } },
  ];
  for (const payload of payloads) {
    const expected = await viaApollo(payload, ann.token);
    for (let i = 0; i < 5; i++) expect(await post(payload, ann.token)).toEqual(expected);
  }
  expect(probe.muninnJitHostile).toBeUndefined();
});
