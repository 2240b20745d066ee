/**
 * An MCP server configured with `requires_approval: true` (server-everything over stdio): a call of one of
 * its tools pauses the turn until an OWNER decides. ALLOW_ONCE runs the call on the server and the model
 * gets its answer; DENY never reaches the server and the model is told.
 */
import { eventually, send } from '../../support/chat-helpers';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { everythingServer } from '../../support/mcp/everything';
import { startTestApp, type TestApp } from '../../support/test-app';
import { lastToolResult } from '../../support/model-requests';
import { finalReply } from '../../support/tool-turns';

const TOOL_APPROVALS = /* GraphQL */ `
  query Approvals($status: ToolApprovalStatus) { toolApprovals(status: $status) { id tool status sessionId args } }
`;
const DECIDE = /* GraphQL */ `
  mutation Decide($id: ID!, $decision: ToolApprovalDecision!) { decideToolApproval(id: $id, decision: $decision) { id status } }
`;

interface Approval {
  id: string;
  tool: string;
  status: string;
  sessionId: string;
  args: unknown;
}

describe('MCP tools that require approval', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let owner: GraphQLTestClient;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 16384 } } },
        mcp: { servers: { everything: everythingServer({ requires_approval: true, connect: 'start' }) } },
      },
    });
    owner = t.client(t.ownerToken);
  });
  afterAll(async () => {
    await owner.close();
    await t.close();
    await model.close();
  });

  /** The pending approval of `everything__echo` whose arguments hold `marker`. */
  async function pendingFor(marker: string): Promise<Approval> {
    return eventually(
      async () => {
        const pending = dataOf(await owner.http<{ toolApprovals: Approval[] }, unknown>(TOOL_APPROVALS, { status: 'PENDING' })).toolApprovals;
        return pending.find((a) => JSON.stringify(a.args).includes(marker));
      },
      30_000,
      `an approval request for ${marker}`,
    );
  }


  /** How many model requests were made for the turn of `text`. */
  const requestsFor = (text: string) => model.chatRequests().filter((r) => JSON.stringify(r.body?.messages ?? []).includes(text)).length;

  it('pauses the call until ALLOW_ONCE, then runs it on the server and the model gets its answer', async () => {
    model.enqueue({ toolCalls: [{ id: 'a1', name: 'everything__echo', arguments: { message: 'allowed-marker' } }] }, (req) => ({ text: `The tool said: ${lastToolResult(req)}` }));
    const sent = await send(owner, 'echo with approval, please');
    const approval = await pendingFor('allowed-marker');
    expect(approval).toMatchObject({ tool: 'everything__echo', status: 'PENDING', sessionId: sent.sessionId, args: { message: 'allowed-marker' } });
    // Paused: the model was asked once and nothing was answered yet.
    await new Promise((r) => setTimeout(r, 300));
    expect(requestsFor('echo with approval, please')).toBe(1);
    const decided = dataOf(await owner.http<{ decideToolApproval: Approval }, unknown>(DECIDE, { id: approval.id, decision: 'ALLOW_ONCE' })).decideToolApproval;
    expect(decided.status).toBe('ALLOWED_ONCE');
    expect(await finalReply(t, sent)).toBe('The tool said: Echo: allowed-marker');
  });

  it('DENY: the server is never called and the model is told the call was refused', async () => {
    model.enqueue({ toolCalls: [{ id: 'd1', name: 'everything__echo', arguments: { message: 'denied-marker' } }] }, (req) => ({ text: `Result: ${lastToolResult(req)}` }));
    const sent = await send(owner, 'echo something I will refuse');
    const approval = await pendingFor('denied-marker');
    dataOf(await owner.http(DECIDE, { id: approval.id, decision: 'DENY' }));
    const reply = await finalReply(t, sent);
    expect(reply.startsWith('Result: ')).toBe(true);
    expect(reply).not.toContain('Echo: denied-marker');
    expect(reply.toLowerCase()).toMatch(/denied|refused|not approved/);
  });
});
