/**
 * A query sent again is answered from its parsed and validated document without Apollo's pipeline
 * (server/http/graphql-fast-path.ts). From outside nothing may differ: the same status, headers and bytes
 * as Apollo's answer (forced here with an `extensions` object, which only Apollo takes), fresh data on
 * every request, and every refusal (no token, a revoked token, bad variables, anonymous introspection,
 * a limit) answered as before.
 */
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

interface Answer {
  status: number;
  contentType: string | null;
  body: string;
}

describe('repeated GraphQL queries', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { graphql: { public_introspection: false } } });
  });
  afterAll(async () => {
    await t.close();
  });

  async function post(payload: Record<string, unknown>, token: string | null = t.ownerToken, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body: JSON.stringify(payload),
    });
    return { status: res.status, contentType: res.headers.get('content-type'), body: await res.text() };
  }

  /** The same request answered by Apollo itself. */
  const viaApollo = (payload: Record<string, unknown>, token?: string | null) => post({ ...payload, extensions: {} }, token);

  async function gql<T>(query: string, variables?: Record<string, unknown>, token: string | null = t.ownerToken): Promise<T> {
    const answer = await post({ query, variables }, token);
    const parsed = JSON.parse(answer.body) as { data?: T; errors?: unknown[] };
    if (parsed.errors) throw new Error(answer.body);
    return parsed.data!;
  }

  it('answers with the same status, content type and bytes as Apollo, the first time and every time after', async () => {
    const payloads = [
      { query: '{ me { id displayName trust } }' },
      { query: '{ __typename }' },
      {
        query: 'query Mine($first: Int) { sessions(first: $first) { totalCount edges { node { id key } } pageInfo { hasNextPage endCursor } } } query Other { me { id } }',
        variables: { first: 5 },
        operationName: 'Mine',
      },
      { query: 'query Other { me { trust } } query Mine { me { id } }', operationName: 'Other' },
    ];
    for (const payload of payloads) {
      const expected = await viaApollo(payload);
      expect(expected.status).toBe(200);
      expect(expected.body).not.toContain('"errors"');
      for (let i = 0; i < 3; i++) expect(await post(payload)).toEqual(expected);
    }
  });

  it('answers as Apollo does once a query is compiled: fragments, aliases, nested users, dates, enums, variables, directives', async () => {
    await gql('mutation { sendMessage(input: { text: "/whoami" }) { sessionId } }');
    const payloads = [
      { query: '{ sessions(first: 20) { totalCount edges { node { id key status messageCount lastActivityAt user { id displayName trust } } } } }' },
      {
        query:
          'query Page($first: Int, $filter: SessionFilter) { page: sessions(first: $first, filter: $filter) { ...Conn } again: sessions(first: 1) { edges { cursor node { __typename id } } } } ' +
          'fragment Conn on SessionConnection { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ...Node user { ... on User { trust displayName } } } } } ' +
          'fragment Node on Session { id channel status startedAt endedAt lastActivityAt title }',
        variables: { first: 5, filter: { status: 'ACTIVE' } },
      },
      { query: 'query($with: Boolean!) { me { id displayName @include(if: $with) trust @skip(if: $with) } }', variables: { with: true } },
      { query: '{ sessions(filter: { key: "no such key \\u00e9 \\\\" }) { totalCount edges { node { id } } } }' },
    ];
    for (const payload of payloads) {
      const expected = await viaApollo(payload);
      expect([expected.status, expected.body]).toEqual([200, expect.not.stringContaining('"errors"')]);
      for (let i = 0; i < 5; i++) expect(await post(payload)).toEqual(expected);
    }
  });

  it('never turns a string of a query into code, however often the query runs', async () => {
    // graphql-jit writes argument literals into generated code and turns its own markers back into code;
    // such a query keeps graphql-js (server/graphql/compiled-query.ts).
    const probe = globalThis as { muninnJitProbe?: number };
    const marker = '__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d(globalThis.muninnJitProbe=1)';
    for (const key of [marker, marker.replace('M', '\\u004d')]) {
      const payload = { query: `{ sessions(filter: { key: "${key}" }) { totalCount } }` };
      const expected = await viaApollo(payload);
      for (let i = 0; i < 5; i++) expect(await post(payload)).toEqual(expected);
    }
    expect(probe.muninnJitProbe).toBeUndefined();
  });

  it('reads the data anew on every request: a rename shows in the next answer of the same query', async () => {
    const query = '{ me { id displayName } }';
    const before = await gql<{ me: { id: string; displayName: string } }>(query);
    await gql(`mutation { renameUser(userId: "${before.me.id}", displayName: "Renamed between two reads") { id } }`);
    const after = await gql<{ me: { displayName: string } }>(query);
    expect(after.me.displayName).toBe('Renamed between two reads');
  });

  it('refuses what it refused before, as Apollo does, also for a query it has answered', async () => {
    const me = { query: '{ me { id } }' };
    expect((await post(me)).status).toBe(200);

    const anonymous = await post(me, null);
    expect(anonymous).toEqual(await viaApollo(me, null));
    expect(JSON.parse(anonymous.body).errors[0].extensions.code).toBe('UNAUTHENTICATED');

    // A token that worked a moment ago stops working at once when revoked.
    const { me: owner } = await gql<{ me: { id: string } }>('{ me { id } }');
    const created = await gql<{ createApiToken: { token: string; apiToken: { id: string } } }>(
      `mutation { createApiToken(userId: "${owner.id}", name: "repeat") { token apiToken { id } } }`,
    );
    const token = created.createApiToken.token;
    expect((await post(me, token)).body).toContain(owner.id);
    await gql(`mutation { revokeApiToken(id: "${created.createApiToken.apiToken.id}") { id } }`);
    const revoked = JSON.parse((await post(me, token)).body) as { errors: Array<{ extensions: { code: string } }> };
    expect(revoked.errors[0]!.extensions.code).toBe('UNAUTHENTICATED');

    const page = { query: 'query Page($first: Int) { sessions(first: $first) { totalCount } }', variables: { first: 2 } };
    expect((await post(page)).status).toBe(200);
    const badVariable = await post({ ...page, variables: { first: 'two' } });
    expect(badVariable).toEqual(await viaApollo({ ...page, variables: { first: 'two' } }));
    expect(badVariable.status).toBe(400);
    expect(JSON.parse(badVariable.body).errors[0].extensions.code).toBe('BAD_USER_INPUT');

    const tooLarge = { ...page, variables: { first: 5000 } };
    expect(await post(tooLarge)).toEqual(await viaApollo(tooLarge));
    expect(JSON.parse((await post(tooLarge)).body).errors).toBeDefined();

    const introspection = { query: '{ __schema { queryType { name } } }' };
    expect((await post(introspection)).status).toBe(200);
    const anonymousIntrospection = await post(introspection, null);
    expect(anonymousIntrospection.status).toBe(401);
    expect(JSON.parse(anonymousIntrospection.body).errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('answers a client that asks for application/graphql-response+json as Apollo does', async () => {
    const me = { query: '{ me { id } }' };
    await post(me);
    const answer = await post(me, t.ownerToken, { accept: 'application/graphql-response+json' });
    expect(answer.contentType).toBe('application/graphql-response+json; charset=utf-8');
    expect(JSON.parse(answer.body).data.me.id).toBeTruthy();
  });
});
