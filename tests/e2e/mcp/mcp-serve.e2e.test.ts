import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AuditEntry } from '../../../server/modules/audit';
import { Memory } from '../../../server/modules/memory';
import { createUserWithToken } from '../../support/chat-helpers';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import type { GraphQLTestClient } from '../../support/graphql-client';
import { startTestApp, type TestApp } from '../../support/test-app';

/** The SDK's own client, connected to Muninn's /mcp with `token`. */
async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'mcp-serve-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

function textOf(result: unknown): string {
  const r = result as CallToolResult;
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

describe('/mcp: Muninn as an MCP server, as the API token\'s user', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let owner: GraphQLTestClient;
  let trusted: { id: string; token: string };
  let member: { id: string; token: string };
  let tina: Client;
  let mia: Client;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    t = await startTestApp({ config: { ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 16384 } } } } });
    owner = t.client(t.ownerToken);
    trusted = await createUserWithToken(owner, 'Tina Trusted', 'TRUSTED');
    member = await createUserWithToken(owner, 'Mia Member', 'MEMBER');
    tina = await connect(t.url, trusted.token);
    mia = await connect(t.url, member.token);
  });
  afterAll(async () => {
    await tina?.close();
    await mia?.close();
    await owner.close();
    await t.close();
    await model.close();
  });

  it('lists the tools each user may use: a MEMBER does not see the TRUSTED list_beats', async () => {
    const tinaTools = (await tina.listTools()).tools.map((x) => x.name).sort();
    const miaTools = (await mia.listTools()).tools.map((x) => x.name).sort();
    expect(tinaTools).toEqual(['list_beats', 'list_sessions', 'memory_save', 'memory_search', 'send_message']);
    expect(miaTools).toEqual(['list_sessions', 'memory_save', 'memory_search', 'send_message']);
    const search = (await tina.listTools()).tools.find((x) => x.name === 'memory_search')!;
    expect(search.inputSchema).toMatchObject({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] });
  });

  it('saves and searches each user\'s own memories; the other user\'s never come back', async () => {
    const saved = JSON.parse(textOf(await tina.callTool({ name: 'memory_save', arguments: { content: 'Tina keeps her spare bicycle key under the blue flowerpot' } })));
    expect(saved).toMatchObject({ saved: true, type: 'fact' });
    await mia.callTool({ name: 'memory_save', arguments: { content: 'Mia keeps her spare bicycle key in the green mailbox' } });
    const row = await t.app.db.repo(t.app.systemCtx('t'), Memory).findOneByOrFail({ id: saved.id });
    expect(row.userId).toBe(trusted.id);

    const tinaHits = JSON.parse(textOf(await tina.callTool({ name: 'memory_search', arguments: { query: 'spare bicycle key' } }))).results as Array<{ content: string }>;
    expect(tinaHits.map((h) => h.content)).toEqual(['Tina keeps her spare bicycle key under the blue flowerpot']);
    const miaHits = JSON.parse(textOf(await mia.callTool({ name: 'memory_search', arguments: { query: 'spare bicycle key flowerpot mailbox' } }))).results as Array<{ content: string }>;
    expect(miaHits.map((h) => h.content)).toEqual(['Mia keeps her spare bicycle key in the green mailbox']);
  });

  it('list_sessions shows only the caller\'s own sessions', async () => {
    // Tina chats once over /mcp's send_message; Mia's list stays without Tina's session.
    model.enqueue({ text: 'Hello Tina, noted.' });
    const answer = JSON.parse(textOf(await tina.callTool({ name: 'send_message', arguments: { text: 'Hi Muninn, remember nothing.' } })));
    expect(answer).toEqual({ answer: 'Hello Tina, noted.' });
    const asked = model.chatRequests().at(-1)!;
    expect(JSON.stringify(asked.body!.messages)).toContain('Hi Muninn, remember nothing.');

    const tinaSessions = JSON.parse(textOf(await tina.callTool({ name: 'list_sessions', arguments: {} }))).sessions as Array<{ id: string; channel: string }>;
    expect(tinaSessions.length).toBeGreaterThanOrEqual(1);
    const miaSessions = JSON.parse(textOf(await mia.callTool({ name: 'list_sessions', arguments: {} }))).sessions as Array<{ id: string }>;
    expect(miaSessions.filter((s) => tinaSessions.some((x) => x.id === s.id))).toEqual([]);
  });

  it('a MEMBER calling the TRUSTED list_beats anyway is refused where it runs, and the refusal is audited', async () => {
    const refused = await mia.callTool({ name: 'list_beats', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe('Refused: the tool "list_beats" needs TRUSTED trust; the sender is MEMBER.');
    const allowed = await tina.callTool({ name: 'list_beats', arguments: {} });
    expect(allowed.isError).toBe(false);
    expect(JSON.parse(textOf(allowed))).toEqual({ beats: [] });
    const rows = await t.app.db.repo(t.app.systemCtx('t'), AuditEntry).find({ where: { action: 'tool.refused' } });
    expect(rows.some((r) => r.actorUserId === member.id && (r.details as { tool?: string; channel?: string }).tool === 'list_beats' && (r.details as { channel?: string }).channel === 'mcp')).toBe(true);
  });

  it('a bad token and no token are refused with 401 before any MCP work', async () => {
    await expect(connect(t.url, 'not-a-real-token')).rejects.toThrow(/401|unknown or revoked/i);
    const res = await fetch(`${t.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });
});
