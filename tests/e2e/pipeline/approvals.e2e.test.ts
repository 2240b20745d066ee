import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, FakeReplies, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { EventCollector, type EventRecord } from '../../support/session-events';
import { AuditLogDocument } from '../../support/graphql/generated';
import { Message, MessageRole, MessageStatus } from '../../../server/modules/sessions';
import { ToolApproval, ToolApprovalStatus } from '../../../server/modules/tools';
import { approvalIdOf, isApprovalNotice, lastUserText, sleep, toolResults } from './pipeline-helpers';

const TOOL_APPROVALS = /* GraphQL */ `
  query Approvals($status: ToolApprovalStatus) { toolApprovals(status: $status) { id tool status sessionId userId args decidedBy } }
`;
const DECIDE = /* GraphQL */ `
  mutation Decide($id: ID!, $decision: ToolApprovalDecision!) { decideToolApproval(id: $id, decision: $decision) { id status decidedBy } }
`;
const STOP_TURN = /* GraphQL */ `
  mutation Stop($sessionId: ID!) { stopTurn(sessionId: $sessionId) }
`;

interface Approval {
  id: string;
  tool: string;
  status: string;
  sessionId: string;
  userId: string | null;
  args: unknown;
  decidedBy: string | null;
}

const finished = (es: EventRecord[]) => es.filter((e) => e.__typename === 'TurnFinished');

/**
 * Issue 3, acceptance 6, end to end: an OWNER's turn asks for `shell` (requires approval); the turn pauses
 * with a Notice naming the approval, and goes on after ALLOW_ONCE, ALLOW_ALWAYS, DENY (GraphQL or
 * `/approve` in chat), an expired request, or a stop.
 */
describe('tool approvals end to end', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let owner: GraphQLTestClient;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    // "run <word>" asks for `shell echo <word>`; once the tool answered, the model reports what it got.
    model.setDefault((req: RecordedRequest) => {
      const messages = req.body?.messages ?? [];
      const last = messages.at(-1);
      if (last?.role === 'tool') return FakeReplies.text(`tool said: ${String(last.content)}`);
      const word = /^run (\S+)$/.exec(lastUserText(req))?.[1];
      if (word) return FakeReplies.toolCalls([{ id: `call_${word}`, name: 'shell', arguments: { argv: ['echo', word] } }]);
      return FakeReplies.text(`Echo: ${lastUserText(req)}`);
    });
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } } },
        tools: { shell: { enabled: true, allow: ['echo'] } },
        log: { level: 'warn' },
      },
    });
    owner = t.client(t.ownerToken);
  });
  afterAll(async () => {
    await owner.close();
    await t.close();
    await model.close();
  });

  /** A new OWNER (ALLOW_ALWAYS is per user, so every case gets its own) with an open web session. */
  async function ownerSession(name: string): Promise<{ client: GraphQLTestClient; userId: string; sessionId: string; events: EventCollector }> {
    const user = await createUserWithToken(owner, name, 'OWNER');
    const client = t.client(user.token);
    const { sessionId } = await send(client, '/whoami');
    return { client, userId: user.id, sessionId, events: new EventCollector(client.wsClient(), sessionId) };
  }

  /** Sends `run <word>` and waits for the approval notice of that call; returns the approval id. */
  async function startShellTurn(s: { client: GraphQLTestClient; events: EventCollector }, word: string): Promise<string> {
    const before = s.events.events.filter(isApprovalNotice).length;
    await send(s.client, `run ${word}`);
    const notices = (await s.events.waitFor((es) => es.filter(isApprovalNotice).length > before)).filter(isApprovalNotice);
    return approvalIdOf(notices.at(-1)!);
  }

  const requestsFor = (word: string) => model.chatRequests().filter((r) => lastUserText(r) === `run ${word}`);
  const toolResultFor = (word: string) => toolResults(requestsFor(word).at(-1)!).get(`call_${word}`);

  async function replyOf(sessionId: string): Promise<Message> {
    const replies = await t.app.db.repo(t.app.systemCtx('test'), Message).find({ where: { sessionId, role: MessageRole.ASSISTANT }, order: { id: 'DESC' } });
    return replies.find((m) => m.dedupeKey?.startsWith('reply:'))!;
  }

  async function audit(action: string): Promise<Array<{ targetId: string | null; details: Record<string, unknown> }>> {
    const log = dataOf(await owner.http(AuditLogDocument, { first: 200, filter: { action } })).auditLog;
    return log.edges.map((e) => ({ targetId: e.node.targetId, details: e.node.details as Record<string, unknown> }));
  }

  it('pauses the turn until ALLOW_ONCE over GraphQL, then runs the tool and finishes', async () => {
    const s = await ownerSession('once');
    const id = await startShellTurn(s, 'alpha');
    expect(s.events.events.find(isApprovalNotice)!.text).toBe(
      `Approval needed for shell: /approve ${id} allow_once|allow_always|deny (an OWNER decides; denied after 30 minutes).`,
    );

    // Paused: the shell call started but did not finish, the model was not asked again, the turn is open.
    await sleep(400);
    expect(finished(s.events.events)).toHaveLength(0);
    expect(requestsFor('alpha')).toHaveLength(1);
    const toolEvents = s.events.events.filter((e) => e.__typename === 'ToolCallEvent');
    expect(toolEvents.map((e) => [e.tool, e.phase])).toEqual([['shell', 'started']]);
    const pending = dataOf(await owner.http<{ toolApprovals: Approval[] }, unknown>(TOOL_APPROVALS, { status: 'PENDING' })).toolApprovals;
    expect(pending.find((a) => a.id === id)).toMatchObject({ tool: 'shell', status: 'PENDING', sessionId: s.sessionId, userId: expect.any(String), args: { argv: ['echo', 'alpha'] } });

    const decided = dataOf(await owner.http<{ decideToolApproval: Approval }, unknown>(DECIDE, { id, decision: 'ALLOW_ONCE' })).decideToolApproval;
    expect(decided.status).toBe('ALLOWED_ONCE');
    await s.events.waitFor((es) => finished(es).length === 1);
    expect(finished(s.events.events)[0]).toMatchObject({ status: 'done' });
    expect(JSON.parse(toolResultFor('alpha')!)).toMatchObject({ exitCode: 0, stdout: 'alpha\n' });
    expect((await replyOf(s.sessionId)).content).toContain('"stdout":"alpha\\n"');
    expect(s.events.events.filter((e) => e.__typename === 'ToolCallEvent').map((e) => [e.phase, e.outcome])).toEqual([
      ['started', null],
      ['finished', 'ok'],
    ]);
    expect((await audit('tool.approval.decide')).find((e) => e.targetId === id)?.details).toMatchObject({ tool: 'shell', decision: 'ALLOW_ONCE' });
    s.events.stop();
    await s.client.close();
  });

  it('ALLOW_ALWAYS runs the call and approves the same user\'s later calls without asking', async () => {
    const s = await ownerSession('always');
    const id = await startShellTurn(s, 'beta');
    dataOf(await s.client.http(DECIDE, { id, decision: 'ALLOW_ALWAYS' }));
    await s.events.waitFor((es) => finished(es).length === 1);
    expect(JSON.parse(toolResultFor('beta')!)).toMatchObject({ stdout: 'beta\n' });

    await send(s.client, 'run gamma');
    await s.events.waitFor((es) => finished(es).length === 2);
    expect(finished(s.events.events).map((e) => e.status)).toEqual(['done', 'done']);
    expect(s.events.events.filter(isApprovalNotice)).toHaveLength(1);
    expect(JSON.parse(toolResultFor('gamma')!)).toMatchObject({ exitCode: 0, stdout: 'gamma\n' });
    expect((await audit('tool.approval.auto')).filter((e) => e.targetId === id)).toHaveLength(1);
    s.events.stop();
    await s.client.close();
  });

  it('DENY over GraphQL: the model is told, the tool does not run, the turn finishes', async () => {
    const s = await ownerSession('deny');
    const id = await startShellTurn(s, 'delta');
    dataOf(await owner.http(DECIDE, { id, decision: 'DENY' }));
    await s.events.waitFor((es) => finished(es).length === 1);
    expect(finished(s.events.events)[0]).toMatchObject({ status: 'done' });
    expect(toolResultFor('delta')).toBe(`The call of "shell" was denied (approval ${id}) and did not run.`);
    expect(s.events.events.filter((e) => e.__typename === 'ToolCallEvent' && e.phase === 'finished').map((e) => e.outcome)).toEqual(['denied']);
    expect((await replyOf(s.sessionId)).status).toBe(MessageStatus.DONE);
  });

  it('/approve <id> deny in the same chat, while its turn waits, is answered at once and ends the wait', async () => {
    const s = await ownerSession('chat deny');
    const id = await startShellTurn(s, 'epsilon');
    const answer = await send(s.client, `/approve ${id} deny`);
    expect(answer.reply).toBe(`Approval ${id} for shell: DENIED.`);
    expect(answer.sessionId).toBe(s.sessionId);
    await s.events.waitFor((es) => finished(es).length === 1);
    expect(toolResultFor('epsilon')).toBe(`The call of "shell" was denied (approval ${id}) and did not run.`);
    // The command was not stored or queued as a message of the session.
    const users = await t.app.db.repo(t.app.systemCtx('test'), Message).findBy({ sessionId: s.sessionId, role: MessageRole.USER });
    expect(users.map((m) => m.content)).toEqual(['run epsilon']);
    s.events.stop();
    await s.client.close();
  });

  it('/approve from another chat: an ADMIN is refused (shell is OWNER-level), another OWNER allows it', async () => {
    const s = await ownerSession('chat allow');
    const id = await startShellTurn(s, 'zeta');
    const admin = t.client((await createUserWithToken(owner, 'an admin', 'ADMIN')).token);
    const refused = await send(admin, `/approve ${id} allow_once`);
    expect(refused.reply).toMatch(/^⚠️ Only an OWNER may decide on "shell"/);
    await sleep(300);
    expect(finished(s.events.events)).toHaveLength(0);

    const other = t.client((await createUserWithToken(owner, 'another owner', 'OWNER')).token);
    expect((await send(other, `/approve ${id} allow_once`)).reply).toBe(`Approval ${id} for shell: ALLOWED_ONCE.`);
    await s.events.waitFor((es) => finished(es).length === 1);
    expect(JSON.parse(toolResultFor('zeta')!)).toMatchObject({ stdout: 'zeta\n' });
    await admin.close();
    await other.close();
    s.events.stop();
    await s.client.close();
  });

  it('an undecided request expires: the call is denied, the turn finishes, a late decision is refused', async () => {
    // tools.approval_timeout_minutes is at least 1, so the request is made overdue instead of waiting for it:
    // the waiting turn re-reads the row (every 500 ms) and expires it itself.
    const s = await ownerSession('timeout');
    const id = await startShellTurn(s, 'eta');
    await t.app.db.repo(t.app.systemCtx('test'), ToolApproval).update({ id }, { expiresAt: new Date(Date.now() - 1000) });
    await s.events.waitFor((es) => finished(es).length === 1);
    expect(finished(s.events.events)[0]).toMatchObject({ status: 'done' });
    expect(toolResultFor('eta')).toBe(`The call of "shell" was not approved in time (approval ${id} expired) and did not run.`);
    const late = await owner.http(DECIDE, { id, decision: 'ALLOW_ONCE' });
    expect(late.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect((await audit('tool.approval.expire')).find((e) => e.targetId === id)?.details).toMatchObject({ tool: 'shell', reason: 'timeout' });
    s.events.stop();
    await s.client.close();
  });

  it('stopping a turn that waits for approval withdraws the request', async () => {
    const s = await ownerSession('stopped');
    const id = await startShellTurn(s, 'theta');
    expect(dataOf(await s.client.http<{ stopTurn: boolean }, unknown>(STOP_TURN, { sessionId: s.sessionId })).stopTurn).toBe(true);
    await s.events.waitFor((es) => finished(es).length === 1);
    expect(finished(s.events.events)[0]).toMatchObject({ status: 'cancelled' });
    const row = await eventually(async () => {
      const r = await t.app.db.repo(t.app.systemCtx('test'), ToolApproval).findOneByOrFail({ id });
      return r.status !== ToolApprovalStatus.PENDING ? r : undefined;
    });
    expect(row.status).toBe(ToolApprovalStatus.EXPIRED);
    expect(requestsFor('theta')).toHaveLength(1);
    expect((await owner.http(DECIDE, { id, decision: 'ALLOW_ONCE' })).errors?.[0]?.extensions?.code).toBe('CONFLICT');
    // The session goes on.
    await send(s.client, 'after the stop');
    await s.events.waitFor((es) => finished(es).length === 2);
    expect(finished(s.events.events)[1]).toMatchObject({ status: 'done' });
    s.events.stop();
    await s.client.close();
  });
});
