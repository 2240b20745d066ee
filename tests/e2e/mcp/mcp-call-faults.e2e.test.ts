import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { FakeOpenAIServer, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { everythingServer } from '../../support/mcp/everything';
import { startTestApp, type TestApp } from '../../support/test-app';
import { lastToolResult } from '../../support/model-requests';
import { finalReply, turn } from '../../support/tool-turns';

const MCP_SERVERS = /* GraphQL */ `query { mcpServers { name state lastError pid tools { name } } }`;
const SECRET_KEY = 'muninn-secret-key-for-the-env-check-0123456789';

type ServerRow = { name: string; state: string; lastError: string | null; pid: number | null; tools: Array<{ name: string }> };

describe('MCP faults during calls: killed mid-call, past the timeout, 5 MB, garbage on stdout, a changing tool list, the environment', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let owner: GraphQLTestClient;
  let other: GraphQLTestClient;
  let dir: string;
  let faultLog: string;
  const savedKey = process.env.MUNINN_SECRET_KEY;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-faults-'));
    faultLog = path.join(dir, 'fault.log');
    // A secret of Muninn's in its own environment: a stdio server must never see it.
    process.env.MUNINN_SECRET_KEY = SECRET_KEY;
    model = await FakeOpenAIServer.start();
    t = await startTestApp({
      config: {
        // Room for a 20,000-character tool result in the history beside every tool's schema (they count), so no
        // turn here is compacted into a new session.
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 131072 } } },
        tools: { max_output_chars: 100_000 },
        mcp: {
          max_result_chars: 20_000,
          servers: {
            everything: everythingServer({ requires_approval: false, env: { VISIBLE_TO_SERVER: 'set-in-config' } }),
            faulty: { transport: 'stdio', command: process.execPath, args: [path.join(__dirname, '../../support/mcp/fault-server.mjs')], env: { FAULT_LOG: faultLog }, requires_approval: false, timeout_ms: 1500 },
            // The same server with a call timeout that leaves time to move 5 MB over stdio on a busy machine.
            bulky: { transport: 'stdio', command: process.execPath, args: [path.join(__dirname, '../../support/mcp/fault-server.mjs')], requires_approval: false, timeout_ms: 30_000 },
          },
        },
      },
    });
    owner = t.client(t.ownerToken);
    const second = await createUserWithToken(owner, 'Other Owner-level', 'ADMIN');
    other = t.client(second.token);
  });
  afterAll(async () => {
    await other?.close();
    await owner?.close();
    await t?.close();
    await model?.close();
    if (savedKey === undefined) delete process.env.MUNINN_SECRET_KEY;
    else process.env.MUNINN_SECRET_KEY = savedKey;
    rmSync(dir, { recursive: true, force: true });
  });



  async function servers(): Promise<ServerRow[]> {
    return dataOf(await owner.http<{ mcpServers: ServerRow[] }, unknown>(MCP_SERVERS, {})).mcpServers;
  }

  const log = () => {
    try {
      return readFileSync(faultLog, 'utf8');
    } catch {
      return '';
    }
  };

  /** Queues one tool call whose result the model repeats as its answer. */
  function callAndRepeat(id: string, name: string, args: Record<string, unknown> = {}): void {
    model.enqueue({ toolCalls: [{ id, name, arguments: args }] }, (req) => ({ text: `result: ${lastToolResult(req)}` }));
  }

  it('a stdio server sees none of Muninn\'s secrets: only a minimal environment and its own env (get-env of server-everything)', async () => {
    callAndRepeat('e1', 'everything__get_env');
    const reply = await turn(t, owner, 'print the env');
    const env = JSON.parse(reply.replace(/^result: /, '')) as Record<string, string>;
    expect(env.VISIBLE_TO_SERVER).toBe('set-in-config');
    expect(env.MUNINN_SECRET_KEY).toBeUndefined();
    expect(reply).not.toContain(SECRET_KEY);
    expect(reply).not.toContain(t.ownerToken);
    const muninnKeys = Object.keys(env).filter((k) => /MUNINN|REDIS|DATABASE|TOKEN|SECRET|KEY|PASSWORD/i.test(k));
    expect(muninnKeys).toEqual([]);
  });

  it('a server killed mid-call: the model gets a clear tool error, mcpServers shows it, and it is started again on the next call', async () => {
    const pidBefore = (await servers()).find((s) => s.name === 'faulty')?.pid;
    model.enqueue({ toolCalls: [{ id: 'k1', name: 'faulty__slow', arguments: { seconds: 20 } }] }, (req) => ({ text: `result: ${lastToolResult(req)}` }));
    const sent = await send(owner, 'run slow');
    const started = await eventually(() => /slow started (\d+)/.exec(log())?.[1], 20_000, 'the slow call to start');
    if (pidBefore) expect(Number(started)).toBe(pidBefore);
    process.kill(Number(started), 'SIGKILL');
    const reply = await finalReply(t, sent, 'the reply to "run slow"');
    expect(reply).toMatch(/^result: The tool "faulty__slow" failed: the MCP server "faulty" is unavailable: the server stopped during the call/);
    const row = (await servers()).find((s) => s.name === 'faulty')!;
    expect(row.state).toBe('FAILED');
    expect(row.lastError).toMatch(/closed the connection/);
    // The next call starts a new process (after the short back-off).
    const again = await eventually(async () => {
      callAndRepeat(`k2-${Date.now()}`, 'faulty__echo', { text: 'back' });
      const r = await turn(t, owner, 'echo again');
      return r === 'result: echo:back' ? r : undefined;
    }, 15_000, 'the faulty server to answer again');
    expect(again).toBe('result: echo:back');
    const pidAfter = (await servers()).find((s) => s.name === 'faulty')!.pid;
    expect(pidAfter).not.toBe(Number(started));
  });

  it('a call past its timeout: a clear tool error, the server is sent a cancellation, and another user\'s turn meanwhile is unaffected', async () => {
    // Two turns at once: each request is answered by what it carries (a user text, or a tool result).
    const route = (req: RecordedRequest) => {
      const last = req.body?.messages?.at(-1);
      if (last?.role === 'tool') return { text: `result: ${lastToolResult(req)}` };
      if (JSON.stringify(req.body?.messages).includes('hang please')) return { toolCalls: [{ id: 'h1', name: 'faulty__hang', arguments: {} }] };
      return { toolCalls: [{ id: 'h2', name: 'everything__echo', arguments: { message: 'still here' } }] };
    };
    model.enqueue(route, route, route, route);
    const hanging = turn(t, owner, 'hang please');
    await eventually(() => log().includes('hang started'), 20_000, 'the hang call to start');
    // Meanwhile another user's turn on another server goes through.
    expect(await turn(t, other, 'echo while the other hangs')).toBe('result: Echo: still here');
    const reply = await hanging;
    expect(reply).toMatch(/^result: The tool "faulty__hang" (did not finish within 1500 ms|failed: .*(timed out|1500))/i);
    await eventually(() => log().includes('hang cancelled'), 10_000, 'the server to get the cancellation');
    // The server itself goes on.
    callAndRepeat('h3', 'faulty__echo', { text: 'after hang' });
    expect(await turn(t, owner, 'echo after hang')).toBe('result: echo:after hang');
  });

  it('a 5 MB result is cut with a note before it reaches the model', async () => {
    callAndRepeat('b1', 'bulky__huge');
    const reply = await turn(t, owner, 'huge please');
    expect(reply).toContain('[MCP result cut: 20000 of 5242880 characters shown]');
    const req = model.chatRequests().at(-1)!;
    expect(JSON.stringify(req.body).length).toBeLessThan(200_000);
  });

  it('garbage on stdout: the call is still answered and the admin sees the protocol error in mcpServers', async () => {
    callAndRepeat('g1', 'faulty__garbage');
    expect(await turn(t, owner, 'garbage please')).toBe('result: answered after garbage');
    const row = (await servers()).find((s) => s.name === 'faulty')!;
    expect(row.state).toBe('READY');
    expect(row.lastError).toMatch(/not MCP/);
  });

  it('tools/list_changed: a tool the server adds is offered to the model at the next turn and can be called', async () => {
    expect((await servers()).find((s) => s.name === 'faulty')!.tools.map((x) => x.name)).not.toContain('faulty__late_tool');
    callAndRepeat('l1', 'faulty__add_tool');
    expect(await turn(t, owner, 'add a tool')).toBe('result: added');
    await eventually(async () => (await servers()).find((s) => s.name === 'faulty')!.tools.some((x) => x.name === 'faulty__late_tool'), 10_000, 'the new tool in mcpServers');
    callAndRepeat('l2', 'faulty__late_tool');
    expect(await turn(t, owner, 'use the new tool')).toBe('result: late tool ran');
    const offered = (model.chatRequests().at(-2)!.body!.tools ?? []).map((x) => x.function.name);
    expect(offered).toContain('faulty__late_tool');
  });
});
