/**
 * Query limits and error masking (issue 2 acceptance 3): too deep, too costly, too many aliases or tokens,
 * and request bodies over `server.body_limit_kb` are refused with a clear error, over HTTP and WebSocket;
 * no stack trace, file path or internal message reaches a client, not even for an internal error.
 */
import WebSocket from 'ws';
import { dataOf, type GqlError, type GraphQLTestClient } from '../support/graphql-client';
import { MeDocument, PluginSettingsDocument } from '../support/graphql/generated';
import { insertSession } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const BODY_LIMIT_KB = 16;
const MAX_DEPTH = 5;
const MAX_COST = 1000;

let t: TestApp;
let owner: GraphQLTestClient;
/** Every body a client received in this file, checked for leaks at the end. */
const bodies: string[] = [];

async function post(
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: { data?: unknown; errors?: GqlError[] } }> {
  const res = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${t.ownerToken}`, ...headers },
    body,
  });
  const text = await res.text();
  bodies.push(text);
  return { status: res.status, json: JSON.parse(text) as { data?: unknown; errors?: GqlError[] } };
}

const postQuery = (query: string, variables?: unknown) => post(JSON.stringify({ query, variables }));

async function ws(query: string) {
  const result = await owner.wsRun(query);
  bodies.push(JSON.stringify(result));
  return result;
}

// sessions(1) edges(2) node(3) user(4) identities(5) key(6)
const TOO_DEEP = '{ sessions { edges { node { user { identities { key } } } } } }';
const AT_DEPTH_LIMIT = '{ sessions { edges { node { user { id } } } } }';
const COSTLY = `{ ${Array.from({ length: 15 }, (_, i) => `a${i}: sessions { edges { node { id key user { id displayName trust } } } }`).join(' ')} }`;
const MANY_ALIASES = `{ ${Array.from({ length: 21 }, (_, i) => `m${i}: me { id }`).join(' ')} }`;
const MANY_TOKENS = `{ me { ${'id '.repeat(5100)}} }`;

beforeAll(async () => {
  t = await startTestApp({
    config: {
      server: { body_limit_kb: BODY_LIMIT_KB },
      graphql: { max_depth: MAX_DEPTH, max_cost: MAX_COST },
    },
  });
  owner = t.client(t.ownerToken);
  const me = dataOf(await owner.http(MeDocument)).me;
  await insertSession(t, me.id);
});

afterAll(async () => {
  await owner.close();
  await t.close();
});

describe('depth', () => {
  it('a query at the depth limit runs', async () => {
    const { status, json } = await postQuery(AT_DEPTH_LIMIT);
    expect(status).toBe(200);
    expect(json.errors).toBeUndefined();
  });

  it('a too-deep query is refused over HTTP with 400, GRAPHQL_VALIDATION_FAILED and the limit', async () => {
    const { status, json } = await postQuery(TOO_DEEP);
    expect(status).toBe(400);
    expect(json.data).toBeUndefined();
    expect(json.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(json.errors?.[0]?.message).toMatch(new RegExp(`depth.*${MAX_DEPTH}`, 'i'));
  });

  it('a too-deep query is refused over WebSocket', async () => {
    const result = await ws(TOO_DEEP);
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(result.errors?.[0]?.message).toMatch(new RegExp(`depth.*${MAX_DEPTH}`, 'i'));
  });

  it('fragments do not hide depth', async () => {
    const query = `{ sessions { ...S } } fragment S on SessionConnection { edges { node { user { identities { key } } } } }`;
    const { status, json } = await postQuery(query);
    expect(status).toBe(400);
    expect(json.errors?.[0]?.message).toMatch(/depth/i);
  });
});

describe('cost and aliases', () => {
  it('a too-costly aliased query is refused with the cost limit, over HTTP and WebSocket', async () => {
    const { status, json } = await postQuery(COSTLY);
    expect(status).toBe(400);
    expect(json.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(json.errors?.[0]?.message).toMatch(new RegExp(`cost.*${MAX_COST}`, 'i'));
    const viaWs = await ws(COSTLY);
    expect(viaWs.errors?.[0]?.message).toMatch(/cost/i);
  });

  it('more aliases than graphql.max_aliases are refused', async () => {
    const { status, json } = await postQuery(MANY_ALIASES);
    expect(status).toBe(400);
    expect(json.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(json.errors?.map((e) => e.message).join(' ')).toMatch(/aliases.*20/i);
  });

  it('more lexical tokens than graphql.max_tokens are refused, over HTTP and WebSocket', async () => {
    const { status, json } = await postQuery(MANY_TOKENS);
    expect(status).toBe(400);
    expect(json.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(json.errors?.[0]?.message).toMatch(/5000 tokens/i);
    const viaWs = await ws(MANY_TOKENS);
    expect(viaWs.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(viaWs.errors?.[0]?.message).toMatch(/5000 tokens/i);
  });
});

describe('request size', () => {
  it(`a body over server.body_limit_kb (${BODY_LIMIT_KB} KiB) is refused with 413 and a clear message`, async () => {
    const query = `{ me { id } } # ${'x'.repeat(BODY_LIMIT_KB * 1024)}`;
    const { status, json } = await postQuery(query);
    expect(status).toBe(413);
    expect(json.errors?.[0]?.extensions?.code).toBe('PAYLOAD_TOO_LARGE');
    expect(json.errors?.[0]?.message).toMatch(new RegExp(`${BODY_LIMIT_KB} KiB`));
  });

  it('a body just under the limit is accepted', async () => {
    const query = `{ me { id } } # ${'x'.repeat(BODY_LIMIT_KB * 1024 - 200)}`;
    const { status, json } = await postQuery(query);
    expect(status).toBe(200);
    expect(json.errors).toBeUndefined();
  });

  it('a WebSocket message over the limit closes the socket with 1009 (message too big)', async () => {
    // graphql-ws reports the refused frame on console.error; keep the test output clean.
    const consoleError = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const socket = new WebSocket(`${t.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    socket.send(
      JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${t.ownerToken}` } }),
    );
    socket.send(
      JSON.stringify({
        id: '1',
        type: 'subscribe',
        payload: { query: `{ me { id } } # ${'x'.repeat(BODY_LIMIT_KB * 1024)}` },
      }),
    );
    try {
      expect(await closed).toBe(1009);
    } finally {
      consoleError.mockRestore();
    }
  });

  it('a body that is not JSON gets 400 BAD_REQUEST', async () => {
    const { status, json } = await post('{ this is not json');
    expect(status).toBe(400);
    expect(json.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
  });

  it('an unknown path gets a JSON 404 that points to /graphql', async () => {
    const res = await fetch(`${t.url}/nope`);
    const text = await res.text();
    bodies.push(text);
    expect(res.status).toBe(404);
    expect(JSON.parse(text)).toMatchObject({ errors: [{ extensions: { code: 'NOT_FOUND' } }] });
  });
});

describe('internal errors are masked', () => {
  it('an operation that fails inside the server answers INTERNAL_SERVER_ERROR without details, and the log keeps them', async () => {
    // Break the database under the running server: the table behind pluginSettings disappears.
    await t.app.dataSource.query('DROP TABLE plugin_settings');
    const http = await post(JSON.stringify({ query: '{ pluginSettings { id } }' }));
    expect(http.status).toBe(200);
    expect(http.json.errors).toEqual([
      expect.objectContaining({
        message: 'Internal server error',
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      }),
    ]);
    const viaWs = await owner.wsRun(PluginSettingsDocument);
    bodies.push(JSON.stringify(viaWs));
    expect(viaWs.errors).toEqual([
      expect.objectContaining({
        message: 'Internal server error',
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      }),
    ]);
    for (const body of [JSON.stringify(http.json), JSON.stringify(viaWs)])
      expect(body).not.toMatch(/plugin_settings|no such table|does not exist|Sqlite/i);
    expect(t.logs.text).toMatch(/no such table: plugin_settings|relation \\?"plugin_settings\\?" does not exist/);
  });

  it('a failure while authenticating (database gone) is masked too', async () => {
    const broken = await startTestApp();
    try {
      await broken.app.dataSource.query('DROP TABLE api_tokens');
      const res = await fetch(`${broken.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${broken.ownerToken}` },
        body: JSON.stringify({ query: '{ me { id } }' }),
      });
      const text = await res.text();
      bodies.push(text);
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(JSON.parse(text)).toMatchObject({ errors: [{ extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
      expect(text).not.toMatch(/api_tokens|no such table|Sqlite|Context creation/i);
      const wsClient = broken.client(broken.ownerToken);
      const wsResult = await wsClient.wsRun(MeDocument);
      await wsClient.close();
      bodies.push(JSON.stringify(wsResult));
      expect(wsResult.errors).toEqual([
        { message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } },
      ]);
      expect(broken.logs.text).toMatch(/no such table: api_tokens|relation \\?"api_tokens\\?" does not exist/);
      const ready = await fetch(`${broken.url}/readyz`);
      bodies.push(await ready.text());
    } finally {
      await broken.close();
    }
  });

  it('no response in this file contained a stack frame, a file path or a source location', () => {
    expect(bodies.length).toBeGreaterThan(15);
    for (const body of bodies) {
      expect(body).not.toMatch(/\bat [\w.<>]+ \(|\n\s+at /);
      expect(body).not.toContain(process.cwd());
      expect(body).not.toMatch(/\/work\/|node_modules|\.ts:\d|\.js:\d/);
      expect(body).not.toMatch(/"stack"|stacktrace/i);
    }
  });
});
