import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, FakeReplies, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { ChatRecorderServer } from '../../support/fakes/chat-recorder';
import { createUserWithToken, eventually, send, SEND_MESSAGE } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { EventCollector } from '../../support/session-events';
import { AuditLogDocument, CreateUserDocument, LinkIdentityDocument } from '../../support/graphql/generated';
import { Message, MessageRole, MessageStatus } from '../../../server/modules/sessions';
import { ToolApproval } from '../../../server/modules/tools';
import { approvalIdOf, fenceChat, isApprovalNotice, lastUserText, offeredTools, registerRecorderChannel, toolResults } from './pipeline-helpers';

const DECIDE = /* GraphQL */ `
  mutation Decide($id: ID!, $decision: ToolApprovalDecision!) { decideToolApproval(id: $id, decision: $decision) { id status } }
`;

type Level = 'BLOCKED' | 'GUEST' | 'MEMBER' | 'TRUSTED' | 'ADMIN' | 'OWNER';
const CHATTING: Level[] = ['GUEST', 'MEMBER', 'TRUSTED', 'ADMIN', 'OWNER'];
const RANK: Record<Level, number> = { BLOCKED: 0, GUEST: 1, MEMBER: 2, TRUSTED: 3, ADMIN: 4, OWNER: 5 };

/** The calls the (misbehaving) model makes for every sender, whatever it was offered. */
const CALL_IDS = ['shell', 'send', 'loopback', 'private', 'metadata', 'localhost'] as const;
type CallId = (typeof CALL_IDS)[number];

/** What DESIGN §3 lets a sender of `level` do with each call. */
function allowed(level: Level, id: CallId): boolean {
  if (id === 'shell') return level === 'OWNER';
  if (id === 'send') return RANK[level] >= RANK.ADMIN;
  return false; // loopback, private, link-local metadata and localhost: nobody
}

/** Tools the model is offered, per DESIGN §3 (web_search is off: no SearXNG configured). */
function expectedTools(level: Level): string[] {
  if (RANK[level] < RANK.MEMBER) return [];
  if (level === 'MEMBER') return ['current_time', 'document_search', 'memory_save', 'memory_search'];
  const beatTools = ['set_beat', 'list_beats', 'update_beat', 'delete_beat'];
  return ['current_time', 'document_search', 'http_request', 'memory_save', 'memory_search', 'send_message', ...beatTools, ...(level === 'OWNER' ? ['shell'] : [])].sort();
}

/**
 * Issue 3, acceptance 5, end to end: senders of each trust level chat (web through `sendMessage`, the
 * GUEST on a platform channel through the inbound pipeline); the fake model asks for shell, send_message
 * to another user and http_request to private targets. Only what DESIGN §3 allows runs, every refusal is
 * audited, the model is told, and every turn ends with a stored reply.
 */
describe('trust end to end', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let recorder: ChatRecorderServer;
  let owner: GraphQLTestClient;
  let recipientId: string;
  const users = new Map<Level, { id: string; token?: string }>();
  const sessions = new Map<Level, string>();

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    model.setDefault((req: RecordedRequest) => {
      const messages = req.body?.messages ?? [];
      if (messages.at(-1)?.role === 'tool') return FakeReplies.text(`final answer for ${lastUserText(req)}`);
      const level = /^level (\w+)$/.exec(lastUserText(req))?.[1];
      if (!level) return FakeReplies.text(`Echo: ${lastUserText(req)}`);
      return FakeReplies.toolCalls([
        { id: 'shell', name: 'shell', arguments: { argv: ['echo', `hi from ${level}`] } },
        { id: 'send', name: 'send_message', arguments: { user_id: recipientId, text: `hello from ${level}` } },
        { id: 'loopback', name: 'http_request', arguments: { url: 'http://127.0.0.1/' } },
        { id: 'private', name: 'http_request', arguments: { url: 'http://10.0.0.1/' } },
        { id: 'metadata', name: 'http_request', arguments: { url: 'http://169.254.169.254/latest/meta-data/' } },
        { id: 'localhost', name: 'http_request', arguments: { url: 'http://localhost/' } },
      ]);
    });
    recorder = await ChatRecorderServer.start();
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } } },
        tools: { shell: { enabled: true, allow: ['echo'] } },
        // GUESTs are served in DMs only where strangers are (DESIGN §3: `open` makes new senders GUESTs).
        channels: { telegram: { dm_policy: 'open' } },
        log: { level: 'warn' },
      },
    });
    await registerRecorderChannel(t, 'telegram', recorder);
    owner = t.client(t.ownerToken);
    for (const level of ['MEMBER', 'TRUSTED', 'ADMIN', 'OWNER'] as const) users.set(level, await createUserWithToken(owner, `${level} sender`, level));
    for (const level of ['GUEST', 'BLOCKED'] as const) {
      const id = dataOf(await owner.http(CreateUserDocument, { input: { displayName: `${level} sender`, trust: level } })).createUser.id;
      dataOf(await owner.http(LinkIdentityDocument, { input: { userId: id, channel: 'telegram', handle: `tg-${level.toLowerCase()}` } }));
      users.set(level, { id });
    }
    recipientId = dataOf(await owner.http(CreateUserDocument, { input: { displayName: 'recipient', trust: 'MEMBER' } })).createUser.id;
    dataOf(await owner.http(LinkIdentityDocument, { input: { userId: recipientId, channel: 'telegram', handle: 'tg-recipient' } }));

    // Web senders, one after the other; the OWNER's shell call waits for (and gets) the OWNER's approval.
    for (const level of ['MEMBER', 'TRUSTED', 'ADMIN', 'OWNER'] as const) {
      const client = t.client(users.get(level)!.token);
      const { sessionId } = await send(client, '/whoami');
      sessions.set(level, sessionId);
      const events = new EventCollector(client.wsClient(), sessionId);
      await send(client, `level ${level}`);
      if (level === 'OWNER') {
        await events.waitFor((es) => es.some(isApprovalNotice));
        const id = approvalIdOf(events.events.find(isApprovalNotice)!);
        dataOf(await client.http(DECIDE, { id, decision: 'ALLOW_ONCE' }));
      }
      await events.waitFor((es) => es.some((e) => e.__typename === 'TurnFinished'));
      expect(events.events.find((e) => e.__typename === 'TurnFinished')).toMatchObject({ status: 'done' });
      events.stop();
      await client.close();
    }
    // The GUEST writes on a platform channel (web chat needs MEMBER).
    const guest = await t.app.chat!.pipeline.handle({
      channel: 'telegram',
      chatId: 'tg-guest',
      chatKind: 'dm',
      sender: { handle: 'tg-guest', displayName: 'Guest' },
      text: 'level GUEST',
      platformMessageId: 'guest-1',
    });
    expect(guest.dropped).toBeUndefined();
    sessions.set('GUEST', guest.session!.id);
    const repo = t.app.db.repo(t.app.systemCtx('test'), Message);
    await eventually(
      async () => (await repo.find({ where: { sessionId: guest.session!.id, role: MessageRole.ASSISTANT } })).some((m) => m.content.startsWith('final answer')),
      15_000,
      'the GUEST reply',
    );
  }, 60_000);

  afterAll(async () => {
    await owner.close();
    await t.close();
    await model.close();
    await recorder.close();
  });

  /** The model's two requests of a level's turn: [asked, got the tool results]. */
  function requestsOf(level: Level): RecordedRequest[] {
    return model.chatRequests().filter((r) => lastUserText(r) === `level ${level}`);
  }

  it.each(CHATTING.map((l) => [l]))('%s: the model is offered exactly the tools of the level', (level) => {
    const [first] = requestsOf(level as Level);
    expect(offeredTools(first!)).toEqual(expectedTools(level as Level));
  });

  it.each(CHATTING.map((l) => [l]))('%s: only what DESIGN §3 allows runs; the model gets every outcome', (level) => {
    const lvl = level as Level;
    const requests = requestsOf(lvl);
    expect(requests).toHaveLength(2);
    const results = toolResults(requests[1]!);
    const outcome = Object.fromEntries(CALL_IDS.map((id) => [id, results.get(id)?.startsWith('Refused: ') ? 'refused' : results.has(id) ? 'ran' : 'missing']));
    expect(outcome).toEqual(Object.fromEntries(CALL_IDS.map((id) => [id, allowed(lvl, id) ? 'ran' : 'refused'])));
    if (lvl === 'OWNER') expect(JSON.parse(results.get('shell')!)).toMatchObject({ exitCode: 0, stdout: 'hi from OWNER\n' });
    if (allowed(lvl, 'send')) expect(JSON.parse(results.get('send')!)).toMatchObject({ sent: true, to: 'telegram:tg-recipient', userId: recipientId });
  });

  it('refusals tell the model why', () => {
    const result = (level: Level, id: CallId) => toolResults(requestsOf(level)[1]!).get(id);
    expect(result('GUEST', 'shell')).toContain('needs OWNER trust; the sender is GUEST');
    expect(result('GUEST', 'loopback')).toContain('needs TRUSTED trust; the sender is GUEST');
    expect(result('MEMBER', 'send')).toContain('needs TRUSTED trust; the sender is MEMBER');
    expect(result('TRUSTED', 'send')).toContain('sending to another user needs ADMIN trust');
    expect(result('ADMIN', 'shell')).toContain('needs OWNER trust; the sender is ADMIN');
    expect(result('OWNER', 'loopback')).toContain('127.0.0.1 is not a public address');
    expect(result('OWNER', 'private')).toContain('10.0.0.1 is not a public address');
    expect(result('OWNER', 'metadata')).toContain('169.254.169.254 is not a public address');
    expect(result('OWNER', 'localhost')).toContain('localhost is a local or metadata host name');
  });

  it.each(CHATTING.map((l) => [l]))('%s: every refusal is in the audit log as tool.refused', async (level) => {
    const lvl = level as Level;
    const userId = users.get(lvl)!.id;
    const log = dataOf(await owner.http(AuditLogDocument, { first: 100, filter: { action: 'tool.refused', actorUserId: userId } })).auditLog;
    const refused = CALL_IDS.filter((id) => !allowed(lvl, id));
    expect(log.totalCount).toBe(refused.length);
    expect(log.edges.map((e) => (e.node.details as { tool: string }).tool).sort()).toEqual(
      refused.map((id) => (id === 'shell' ? 'shell' : id === 'send' ? 'send_message' : 'http_request')).sort(),
    );
    for (const e of log.edges) expect(e.node.details).toMatchObject({ userId, trust: lvl, sessionId: sessions.get(lvl), reason: expect.any(String) });
  });

  it.each(CHATTING.map((l) => [l]))('%s: the turn went on to a final reply', async (level) => {
    const replies = await t.app.db.repo(t.app.systemCtx('test'), Message).find({ where: { sessionId: sessions.get(level as Level)!, role: MessageRole.ASSISTANT }, order: { id: 'ASC' } });
    const final = replies.at(-1)!;
    expect([final.content, final.status]).toEqual([`final answer for level ${level}`, MessageStatus.DONE]);
  });

  it('only the ADMIN and the OWNER reached the other user; the GUEST got its reply on its channel', async () => {
    await eventually(() => recorder.chunks.filter((c) => c.chatId === 'tg-recipient').length >= 2 && recorder.chunks.some((c) => c.chatId === 'tg-guest'), 10_000, 'deliveries');
    // Every turn has finished (the test before), so all they handed over is in the chats' mailboxes.
    expect((await fenceChat(t, recorder, 'telegram', 'tg-recipient')).sort()).toEqual(['hello from ADMIN', 'hello from OWNER']);
    expect(await fenceChat(t, recorder, 'telegram', 'tg-guest')).toEqual(['final answer for level GUEST']);
  });

  it('shell asked for approval only for the OWNER', async () => {
    const approvals = await t.app.db.repo(t.app.systemCtx('test'), ToolApproval).find();
    expect(approvals.map((a) => [a.tool, a.userId, a.status])).toEqual([['shell', users.get('OWNER')!.id, 'ALLOWED_ONCE']]);
  });

  it('BLOCKED senders are not answered at all: not on a platform channel, not over GraphQL', async () => {
    const before = model.chatRequests().length;
    const blocked = await t.app.chat!.pipeline.handle({
      channel: 'telegram',
      chatId: 'tg-blocked',
      chatKind: 'dm',
      sender: { handle: 'tg-blocked' },
      text: 'level BLOCKED',
      platformMessageId: 'blocked-1',
    });
    expect(blocked).toMatchObject({ dropped: 'blocked', session: null, ticket: null, replies: [] });

    // A MEMBER who is then BLOCKED keeps a token that no longer works for chat.
    const member = await createUserWithToken(owner, 'soon blocked', 'MEMBER');
    await owner.http(/* GraphQL */ `mutation B($id: ID!) { setUserTrust(userId: $id, trust: BLOCKED) { id } }`, { id: member.id });
    const res = await t.client(member.token).http(SEND_MESSAGE, { input: { text: 'level BLOCKED' } });
    expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    // Nothing was stored for a turn, so no model call can follow; no answer is on its way to the chat.
    expect(await t.app.db.repo(t.app.systemCtx('test'), Message).countBy({ content: 'level BLOCKED' })).toBe(0);
    expect(model.chatRequests()).toHaveLength(before);
    expect(await fenceChat(t, recorder, 'telegram', 'tg-blocked')).toEqual([]);
  });
});

/** The same rules for models without native tool calls, which write a JSON `tool_calls` block in text. */
describe('trust end to end, tool calls in text', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    model.setDefault((req: RecordedRequest) => {
      const last = req.body?.messages?.at(-1);
      if (last?.role === 'user' && String(last.content).startsWith('Result of tool')) return FakeReplies.text('final answer in text mode');
      return FakeReplies.textToolCalls([
        { name: 'current_time', arguments: { timezone: 'UTC' } },
        { name: 'shell', arguments: { argv: ['echo', 'from text'] } },
        { name: 'http_request', arguments: { url: 'http://10.0.0.1/' } },
      ]);
    });
    t = await startTestApp({
      config: {
        ai: { providers: { plain: { base_url: model.baseUrl, model: 'plain-model', supports_tools: false } } },
        tools: { shell: { enabled: true, allow: ['echo'] } },
        log: { level: 'warn' },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  it('an ADMIN: the tools are described in the prompt, allowed calls run, the others are refused and audited', async () => {
    const owner = t.client(t.ownerToken);
    const admin = await createUserWithToken(owner, 'text admin', 'ADMIN');
    const client = t.client(admin.token);
    const { sessionId } = await send(client, '/whoami');
    const events = new EventCollector(client.wsClient(), sessionId);
    await send(client, 'what time is it?');
    await events.waitFor((es) => es.some((e) => e.__typename === 'TurnFinished'));
    expect(events.events.find((e) => e.__typename === 'TurnFinished')).toMatchObject({ status: 'done' });

    const [asked, answered] = model.chatRequests();
    expect(asked!.body?.tools).toBeUndefined();
    const system = String(asked!.body?.messages?.[0]?.content);
    expect(system).toContain('{"tool_calls":[{"name":"<tool>","arguments":{…}}]}');
    expect(system.match(/^- (\w+):/gm)?.map((l) => l.slice(2, -1)).sort()).toEqual(['current_time', 'delete_beat', 'document_search', 'http_request', 'list_beats', 'memory_save', 'memory_search', 'send_message', 'set_beat', 'update_beat']);

    const results = (answered!.body?.messages ?? []).filter((m) => m.role === 'user' && String(m.content).startsWith('Result of tool')).map((m) => String(m.content));
    expect(results).toHaveLength(3);
    expect(results[0]).toMatch(/^Result of tool current_time \(call [^)]+\):\n\{/);
    expect(results[1]).toMatch(/^Result of tool shell \(call [^)]+\):\nRefused: the tool "shell" needs OWNER trust; the sender is ADMIN/);
    expect(results[2]).toMatch(/^Result of tool http_request \(call [^)]+\):\nRefused: .*10\.0\.0\.1 is not a public address/);

    const log = dataOf(await owner.http(AuditLogDocument, { first: 50, filter: { action: 'tool.refused', actorUserId: admin.id } })).auditLog;
    expect(log.edges.map((e) => (e.node.details as { tool: string }).tool).sort()).toEqual(['http_request', 'shell']);
    const reply = await t.app.db.repo(t.app.systemCtx('test'), Message).find({ where: { sessionId, role: MessageRole.ASSISTANT }, order: { id: 'ASC' } });
    expect(reply.at(-1)).toMatchObject({ content: 'final answer in text mode', status: MessageStatus.DONE });
    expect(await t.app.db.repo(t.app.systemCtx('test'), ToolApproval).count()).toBe(0);
    events.stop();
    await client.close();
    await owner.close();
  });
});
