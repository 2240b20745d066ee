import { AuditEntry } from '../../../server/modules/audit';
import { createUserWithToken } from '../../support/chat-helpers';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { everythingServer } from '../../support/mcp/everything';
import { TestMcpHttpServer } from '../../support/mcp/test-mcp-http-server';
import { startTestApp, type TestApp } from '../../support/test-app';
import { lastToolResult } from '../../support/model-requests';
import { turn } from '../../support/tool-turns';

const MCP_SERVERS = /* GraphQL */ `
  query { mcpServers { name transport source state lastError tools { name serverTool minTrust requiresApproval } } }
`;

describe('MCP tools in a turn (server-everything over stdio, an SDK server over streamable HTTP)', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let remote: TestMcpHttpServer;
  let owner: GraphQLTestClient;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    remote = await TestMcpHttpServer.start();
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 16384 } } },
        mcp: {
          servers: {
            everything: everythingServer({ requires_approval: false, connect: 'start' }),
            remote: { transport: 'http', url: remote.url },
          },
        },
      },
    });
    owner = t.client(t.ownerToken);
  });
  afterAll(async () => {
    await owner.close();
    await t.close();
    await remote.close();
    await model.close();
  });


  it('offers <server>__<tool> to the model; a call of everything__echo reaches the server and its answer reaches the model and the user', async () => {
    model.enqueue({ toolCalls: [{ id: 'c1', name: 'everything__echo', arguments: { message: 'hello from the model' } }] }, (req) => ({ text: `The tool said: ${lastToolResult(req)}` }));
    const reply = await turn(t, owner, 'Please echo something');
    expect(reply).toBe('The tool said: Echo: hello from the model');
    const first = model.chatRequests().at(-2)!;
    const names = (first.body!.tools ?? []).map((tool) => tool.function.name);
    expect(names).toEqual(expect.arrayContaining(['everything__echo', 'everything__get_sum', 'everything__get_tiny_image', 'everything__trigger_long_running_operation', 'remote__whoami', 'remote__multiply']));
    const echo = first.body!.tools!.find((tool) => tool.function.name === 'everything__echo')!;
    expect(echo.function.parameters).toMatchObject({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });
  });

  it('get-sum (renamed get_sum) adds; the HTTP server multiplies', async () => {
    model.enqueue(
      {
        toolCalls: [
          { id: 'c2', name: 'everything__get_sum', arguments: { a: 19, b: 23 } },
          { id: 'c3', name: 'remote__multiply', arguments: { a: 6, b: 7 } },
        ],
      },
      (req) => {
        const tools = (req.body?.messages ?? []).filter((m) => m.role === 'tool').slice(-2).map((m) => m.content);
        return { text: tools.join(' | ') };
      },
    );
    const reply = await turn(t, owner, 'Add and multiply');
    expect(reply).toBe('The sum of 19 and 23 is 42. | product=42');
    expect(remote.calls.at(-1)).toMatchObject({ tool: 'multiply', args: { a: 6, b: 7 } });
  });

  it('an image result becomes a note for a model that cannot see images; a long-running call finishes', async () => {
    model.enqueue(
      { toolCalls: [{ id: 'c4', name: 'everything__get_tiny_image', arguments: {} }, { id: 'c5', name: 'everything__trigger_long_running_operation', arguments: { duration: 1, steps: 2 } }] },
      (req) => ({ text: (req.body?.messages ?? []).filter((m) => m.role === 'tool').slice(-2).map((m) => String(m.content)).join('\n---\n') }),
    );
    const reply = await turn(t, owner, 'Show the image and run the long task');
    expect(reply).toMatch(/\[an image \(image\/png, \d+ KB\) was returned; this model cannot see images\]/);
    expect(reply).toMatch(/Long running operation completed/i);
  });

  it('mcpServers shows both servers ready with their tools', async () => {
    const data = dataOf(await owner.http<{ mcpServers: Array<{ name: string; transport: string; source: string; state: string; lastError: string | null; tools: Array<{ name: string; serverTool: string; minTrust: string; requiresApproval: boolean }> }> }, unknown>(MCP_SERVERS, {}));
    const everything = data.mcpServers.find((s) => s.name === 'everything')!;
    expect(everything).toMatchObject({ transport: 'STDIO', source: 'CONFIG', state: 'READY', lastError: null });
    expect(everything.tools).toContainEqual({ name: 'everything__get_sum', serverTool: 'get-sum', minTrust: 'TRUSTED', requiresApproval: false });
    const remoteServer = data.mcpServers.find((s) => s.name === 'remote')!;
    expect(remoteServer).toMatchObject({ transport: 'HTTP', state: 'READY' });
    expect(remoteServer.tools.map((x) => x.name).sort()).toEqual(['remote__multiply', 'remote__whoami']);
  });

  it('a MEMBER is not shown TRUSTED-only MCP tools, and a call anyway is refused where it runs and audited', async () => {
    const member = await createUserWithToken(owner, 'Mia Member', 'MEMBER');
    const client = t.client(member.token);
    model.enqueue({ toolCalls: [{ id: 'c6', name: 'everything__echo', arguments: { message: 'sneaky' } }] }, (req) => ({ text: `got: ${lastToolResult(req)}` }));
    const reply = await turn(t, client, 'echo please');
    expect(reply).toBe('got: Refused: the tool "everything__echo" needs TRUSTED trust; the sender is MEMBER.');
    const shown = (model.chatRequests().at(-2)!.body!.tools ?? []).map((x) => x.function.name);
    expect(shown.some((n) => n.startsWith('everything__') || n.startsWith('remote__'))).toBe(false);
    const rows = await t.app.db.repo(t.app.systemCtx('t'), AuditEntry).find({ where: { action: 'tool.refused' } });
    expect(rows.some((r) => r.actorUserId === member.id && (r.details as { tool?: string }).tool === 'everything__echo')).toBe(true);
    await client.close();
  });
});
