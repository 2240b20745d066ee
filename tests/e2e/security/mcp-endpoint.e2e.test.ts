/**
 * Security suite, Muninn's own MCP server (`/mcp`): missing, unknown and revoked tokens, a token in the
 * query string, a blocked user, a GUEST, malformed and oversize bodies, methods other than POST, arguments
 * that name another user, a trust lowered while the client stays connected, and the `mcp` channel switch:
 * each is refused with its 4xx or a refused tool call (audited), never a 5xx, and nothing of another user
 * comes back.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AuditEntry } from '../../../server/modules/audit';
import { Memory, MemoryScope } from '../../../server/modules/memory';
import { createUserWithToken } from '../../support/chat-helpers';
import { CreateApiTokenDocument, RevokeApiTokenDocument, SetUserTrustDocument } from '../../support/graphql/generated';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { startTestApp, type TestApp } from '../../support/test-app';

const ACCEPT = 'application/json, text/event-stream';
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'hostile', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

function textOf(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

describe('security: /mcp refuses hostile requests and never acts beyond the token\'s user', () => {
  let t: TestApp;
  let owner: GraphQLTestClient;
  const tokens: Record<string, string> = {};
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp({ config: { server: { body_limit_kb: 64 } } });
    owner = t.client(t.ownerToken);
    for (const [key, name, trust] of [
      ['trusted', 'Terry Trusted', 'TRUSTED'],
      ['member', 'Molly Member', 'MEMBER'],
      ['guest', 'Gus Guest', 'GUEST'],
      ['blocked', 'Bob Blocked', 'BLOCKED'],
    ] as const) {
      const u = await createUserWithToken(owner, name, trust);
      tokens[key] = u.token;
      ids[key] = u.id;
    }
    const spare = dataOf(await owner.http(CreateApiTokenDocument, { userId: ids.member!, name: 'to revoke' })).createApiToken;
    dataOf(await owner.http(RevokeApiTokenDocument, { id: spare.apiToken.id }));
    tokens.revoked = spare.token;
  });
  afterAll(async () => {
    await owner.close();
    await t.close();
  });

  async function post(body: string, headers: Record<string, string> = {}, path = '/mcp', method = 'POST'): Promise<{ status: number; text: string; headers: Headers }> {
    const res = await fetch(`${t.url}${path}`, { method, headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: method === 'POST' ? body : undefined });
    return { status: res.status, text: await res.text(), headers: res.headers };
  }

  it.each([
    ['no token', {}, 401],
    ['an unknown token', { authorization: 'Bearer mk_nope_nope' }, 401],
    ['Basic instead of Bearer', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, 401],
  ] as const)('%s → 401', async (_name, headers, status) => {
    const res = await post(LIST, headers);
    expect(res.status).toBe(status);
    expect(JSON.parse(res.text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 } });
    expect(res.text).not.toContain('"tools"');
  });

  it('a revoked token → 401; a blocked user → 403; a token in the query string is not a token', async () => {
    expect((await post(LIST, { authorization: `Bearer ${tokens.revoked}` })).status).toBe(401);
    expect((await post(LIST, { authorization: `Bearer ${tokens.blocked}` })).status).toBe(403);
    expect((await post(LIST, {}, `/mcp?token=${tokens.trusted}`)).status).toBe(401);
    expect((await post(LIST, {}, `/mcp?access_token=${tokens.trusted}`)).status).toBe(401);
  });

  it('malformed JSON → 400, a body over the limit → 413, GET/DELETE → 405, a batch of garbage → 4xx: never 5xx', async () => {
    const auth = { authorization: `Bearer ${tokens.member}` };
    expect((await post('{"jsonrpc":"2.0",', auth)).status).toBe(400);
    expect((await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(100_000) } }), auth)).status).toBe(413);
    expect((await post('', auth, '/mcp', 'GET')).status).toBe(405);
    expect((await post('', auth, '/mcp', 'DELETE')).status).toBe(405);
    for (const body of ['null', '42', '"text"', '[]', '[1,2]', '{"method":"tools/call"}', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":{"$ne":1}}}']) {
      const res = await post(body, auth);
      expect(res.status).toBeLessThan(500);
    }
    expect(t.logs.entries().filter((e) => Number(e.level) >= 50 && /MCP request/.test(String(e.msg)))).toEqual([]);
  });

  it('a GUEST is offered no tools and every call is refused and audited', async () => {
    const guest = await connect(t.url, tokens.guest!);
    expect((await guest.listTools()).tools).toEqual([]);
    const res = await guest.callTool({ name: 'memory_search', arguments: { query: 'anything' } });
    expect(res.isError).toBe(true);
    expect(textOf(res)).toMatch(/^Refused: .*needs MEMBER trust; the sender is GUEST/);
    await guest.close();
    const rows = await t.app.db.repo(t.app.systemCtx('t'), AuditEntry).find({ where: { action: 'tool.refused' } });
    expect(rows.some((r) => r.actorUserId === ids.guest)).toBe(true);
  });

  it('arguments naming another user or scope are rejected; a saved memory is always the caller\'s own', async () => {
    const member = await connect(t.url, tokens.member!);
    for (const extra of [{ userId: ids.trusted }, { scope: 'GLOBAL' }, { user_id: ids.trusted }]) {
      const res = await member.callTool({ name: 'memory_save', arguments: { content: 'planted', ...extra } });
      expect(res.isError).toBe(true);
      expect(textOf(res)).toMatch(/Invalid arguments/);
    }
    const ok = JSON.parse(textOf(await member.callTool({ name: 'memory_save', arguments: { content: 'Molly\'s secret number is 4471' } })));
    const row = await t.app.db.repo(t.app.systemCtx('t'), Memory).findOneByOrFail({ id: ok.id });
    expect(row).toMatchObject({ userId: ids.member, scope: MemoryScope.USER });
    expect(await t.app.db.repo(t.app.systemCtx('t'), Memory).countBy({ content: 'planted' })).toBe(0);
    // The TRUSTED user searching for it gets nothing of Molly's.
    const trusted = await connect(t.url, tokens.trusted!);
    const hits = JSON.parse(textOf(await trusted.callTool({ name: 'memory_search', arguments: { query: 'Molly secret number 4471' } }))).results;
    expect(hits).toEqual([]);
    const sessions = JSON.parse(textOf(await trusted.callTool({ name: 'list_sessions', arguments: { limit: 50 } }))).sessions as unknown[];
    expect(JSON.stringify(sessions)).not.toContain(ids.member!);
    await trusted.close();
    await member.close();
  });

  it('trust lowered while the client stays connected: the next call of a TRUSTED tool is refused', async () => {
    const client = await connect(t.url, tokens.trusted!);
    expect((await client.callTool({ name: 'list_beats', arguments: {} })).isError).toBe(false);
    dataOf(await owner.http(SetUserTrustDocument, { userId: ids.trusted!, trust: 'MEMBER' as never }));
    try {
      expect((await client.listTools()).tools.map((x) => x.name)).not.toContain('list_beats');
      const res = await client.callTool({ name: 'list_beats', arguments: {} });
      expect(res.isError).toBe(true);
      expect(textOf(res)).toBe('Refused: the tool "list_beats" needs TRUSTED trust; the sender is MEMBER.');
    } finally {
      dataOf(await owner.http(SetUserTrustDocument, { userId: ids.trusted!, trust: 'TRUSTED' as never }));
      await client.close();
    }
  });

  it('memory_save switched off on the mcp channel is neither offered nor run there', async () => {
    const set = /* GraphQL */ `mutation($input: PluginSettingInput!) { setPluginSetting(input: $input) { plugin channel enabled } }`;
    dataOf(await owner.http<unknown, unknown>(set, { input: { plugin: 'memory_save', channel: 'mcp', enabled: false } }));
    const client = await connect(t.url, tokens.member!);
    try {
      expect((await client.listTools()).tools.map((x) => x.name)).not.toContain('memory_save');
      const res = await client.callTool({ name: 'memory_save', arguments: { content: 'should not be stored' } });
      expect(res.isError).toBe(true);
      expect(textOf(res)).toBe('Refused: the tool "memory_save" is turned off on the mcp channel.');
      expect(await t.app.db.repo(t.app.systemCtx('t'), Memory).countBy({ content: 'should not be stored' })).toBe(0);
    } finally {
      dataOf(await owner.http<unknown, unknown>(set, { input: { plugin: 'memory_save', channel: 'mcp', enabled: true } }));
      await client.close();
    }
  });
});
