/**
 * The agent loop's think step at its ports: a scripted model caller, the real tool layer (registry,
 * pipeline with trust checks, approvals) on SQLite, and recorded outbound, presence and events.
 */
import { z } from 'zod';
import { TrustLevel } from '../../../server/common/trust';
import { createToolLayer, type ToolLayer } from '../../../server/composition/tool-layer';
import { AgentLoop, NO_MEMORIES, NO_SKILLS, type ExchangeListener, type TurnCompactor } from '../../../server/modules/agent';
import { TurnAbortedError } from '../../../server/modules/conversation';
import { ContextLengthError, estimateMessages, ModelApiError } from '../../../server/modules/models';
import { PluginSettingService } from '../../../server/modules/plugins';
import { Message, MessageRole, MessageStatus, type Session } from '../../../server/modules/sessions';
import { ToolApprovalDecision, type Tool } from '../../../server/modules/tools';
import { UsageRecord, UsageService } from '../../../server/modules/usage';
import type { User } from '../../../server/modules/users';
import { InMemorySessionEvents, RecordingOutbound, ScriptedModelCaller, type ScriptedAnswer } from '../../support/ports';
import { SqliteWorld } from '../../support/sqlite-world';
import { testConfig } from '../../support/test-config';

let world: SqliteWorld;
let tools: ToolLayer;
let notices: RecordingOutbound;
const users: Partial<Record<'guest' | 'member' | 'trusted' | 'owner', User>> = {};
const echoRuns: string[] = [];

const echo: Tool<{ text: string }> = {
  name: 'echo',
  description: 'Repeats text.',
  schema: z.object({ text: z.string() }),
  minTrust: TrustLevel.MEMBER,
  run: async (_tc, { text }) => (echoRuns.push(text), `echo: ${text}`),
};
const vault: Tool<Record<string, never>> = {
  name: 'vault',
  description: 'Opens the vault (TRUSTED only).',
  schema: z.object({}),
  minTrust: TrustLevel.TRUSTED,
  run: async () => 'the vault is open',
};
const launch: Tool<{ target: string }> = {
  name: 'launch',
  description: 'Needs an approval.',
  schema: z.object({ target: z.string() }),
  minTrust: TrustLevel.MEMBER,
  requiresApproval: true,
  run: async (_tc, { target }) => `launched ${target}`,
};

beforeAll(async () => {
  world = await SqliteWorld.open();
  notices = new RecordingOutbound();
  tools = createToolLayer({ config: testConfig(world.dir), db: world.db, audit: world.audit, plugins: new PluginSettingService(world.db, world.audit), users: world.users, notices, extraTools: [echo, vault, launch] });
  users.guest = await world.user('Gus', TrustLevel.GUEST);
  users.member = await world.user('Mia', TrustLevel.MEMBER);
  users.trusted = await world.user('Tru', TrustLevel.TRUSTED);
  users.owner = await world.user('Olga', TrustLevel.OWNER);
});
afterAll(() => world.close());

interface Setup {
  script?: ScriptedAnswer[];
  nativeTools?: boolean;
  maxIterations?: number;
  compactor?: TurnCompactor;
}

function agent(o: Setup = {}) {
  const models = new ScriptedModelCaller(o.script ?? [], { supportsTools: o.nativeTools ?? true });
  const events = new InMemorySessionEvents();
  const out = new RecordingOutbound();
  const exchanges: Array<{ userMessageIds: string[]; replyMessageId: string }> = [];
  const exchange: ExchangeListener = { afterExchange: async (_ctx, _s, e) => void exchanges.push(e) };
  const loop = new AgentLoop(
    { db: world.db, users: world.users, lifecycle: world.lifecycle, events, models, tools: tools.agentTools, memory: NO_MEMORIES, skills: NO_SKILLS, outbound: out, usage: new UsageService(world.db), exchange, presence: out, compactor: o.compactor },
    { systemPrompt: 'You are a test assistant.', maxIterations: o.maxIterations ?? 4, historyMessages: 20, estimate: estimateMessages },
  );
  return { loop, models, events, out, exchanges };
}

/** A session of `user` with one QUEUED message, claimed as the drain would (PROCESSING, with a turn id). */
async function turnFor(user: User, text: string): Promise<{ session: Session; batch: Message[]; turnId: string }> {
  const session = await world.session(user);
  const repo = world.db.repo(world.system(), Message);
  const turnId = `turn-${Math.random().toString(36).slice(2, 10)}`;
  const msg = await repo.save(repo.create({ sessionId: session.id, userId: user.id, role: MessageRole.USER, content: text, status: MessageStatus.PROCESSING, turnId, dedupeKey: null }));
  return { session, batch: [msg], turnId };
}

const messagesOf = (sessionId: string) => world.db.repo(world.system(), Message).find({ where: { sessionId }, order: { id: 'ASC' } });
const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });
const run = (a: ReturnType<typeof agent>, t: Awaited<ReturnType<typeof turnFor>>, signal = new AbortController().signal) => a.loop.runTurn(world.system('drain'), t.session, t.batch, t.turnId, signal);

describe('AgentLoop think step', () => {
  it('answers in one call: stores and delivers the reply, marks the batch done, shows typing, records usage', async () => {
    const a = agent({ script: [{ text: '  Hello Mia!  ' }] });
    const t = await turnFor(users.member!, 'hi there');
    await run(a, t);

    expect(a.models.calls).toHaveLength(1);
    const [first] = a.models.calls;
    expect(first!.input).toMatchObject({ role: 'main', priority: 'interactive', stream: { sessionId: t.session.id, turnId: t.turnId, holdToolCallText: false } });
    expect(first!.input.tools?.map((s) => s.name)).toEqual(expect.arrayContaining(['echo', 'launch']));
    expect(first!.input.tools?.map((s) => s.name)).not.toContain('vault');
    expect(first!.messages[0]).toMatchObject({ role: 'system' });
    // The running turn's user message, then the turn note (the time) after it.
    expect(first!.messages.at(-2)).toMatchObject({ role: 'user', content: expect.stringContaining('hi there') });
    expect(first!.messages.at(-1)).toMatchObject({ role: 'system', content: expect.stringMatching(/^Now: /) });

    const rows = await messagesOf(t.session.id);
    expect(rows.map((m) => [m.role, m.content, m.status])).toEqual([
      [MessageRole.USER, 'hi there', MessageStatus.DONE],
      [MessageRole.ASSISTANT, 'Hello Mia!', MessageStatus.DONE],
    ]);
    expect(a.out.replies).toEqual([{ sessionId: t.session.id, channel: 'telegram', chatId: t.session.chatId, messageId: rows[1]!.id, text: 'Hello Mia!', turnId: t.turnId }]);
    expect(a.out.typing).toEqual([`telegram:${t.session.chatId}:on`, `telegram:${t.session.chatId}:off`]);
    expect(a.events.of(t.session.id).map((e) => e.type)).toEqual(['TurnStarted', 'MessageAdded', 'TurnFinished']);
    expect(a.events.of(t.session.id, 'TurnFinished')[0]).toMatchObject({ status: 'done', replyMessageId: rows[1]!.id });
    expect(a.exchanges).toEqual([{ userMessageIds: [t.batch[0]!.id], replyMessageId: rows[1]!.id }]);
    expect(await world.db.repo(world.system(), UsageRecord).countBy({ sessionId: t.session.id })).toBe(1);
  });

  it('asks the model while "typing…" is still on its way, and hands the reply over only once it was shown', async () => {
    const a = agent({ script: [{ text: 'Quick one' }] });
    const order: string[] = [];
    let show!: () => void;
    const shown = new Promise<void>((resolve) => (show = resolve));
    a.out.setTyping = async (_channel, _chatId, on) => {
      if (!on) return;
      await shown;
      order.push('typing shown');
    };
    const deliver = a.out.deliver.bind(a.out);
    a.out.deliver = async (ctx, req) => {
      order.push('reply handed over');
      await deliver(ctx, req);
    };
    const t = await turnFor(users.member!, 'hi there');
    const turn = run(a, t);
    for (let i = 0; i < 500 && a.models.calls.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(a.models.calls).toHaveLength(1);
    show();
    await turn;
    expect(order).toEqual(['typing shown', 'reply handed over']);
  });

  it('runs native tool calls through the pipeline and feeds the results back, then answers', async () => {
    const a = agent({ script: [{ text: '', toolCalls: [call('c1', 'echo', { text: 'ping' })] }, { text: 'The tool said ping.' }] });
    const t = await turnFor(users.member!, 'use echo');
    await run(a, t);

    expect(a.models.calls).toHaveLength(2);
    expect(a.models.calls[1]!.messages.slice(-2)).toEqual([
      { role: 'assistant', content: '', toolCalls: [call('c1', 'echo', { text: 'ping' })] },
      { role: 'tool', content: 'echo: ping', toolCallId: 'c1', name: 'echo' },
    ]);
    const rows = await messagesOf(t.session.id);
    expect(rows.map((m) => [m.role, m.content])).toEqual([
      [MessageRole.USER, 'use echo'],
      [MessageRole.ASSISTANT, ''],
      [MessageRole.TOOL, 'echo: ping'],
      [MessageRole.ASSISTANT, 'The tool said ping.'],
    ]);
    expect(rows[1]!.toolCalls).toEqual([call('c1', 'echo', { text: 'ping' })]);
    expect(rows[2]!.toolCallId).toBe('c1');
    const toolEvents = a.events.of(t.session.id, 'ToolCallEvent');
    expect(toolEvents.map((e) => [e.tool, e.phase, e.outcome])).toEqual([
      ['echo', 'started', undefined],
      ['echo', 'finished', 'ok'],
    ]);
    expect(a.out.replies.map((r) => r.text)).toEqual(['The tool said ping.']);
  });

  it('reads a JSON tool_calls block in the text of a model without native tools', async () => {
    const block = '```json\n{"tool_calls":[{"name":"echo","arguments":{"text":"from text"}}]}\n```';
    const a = agent({ nativeTools: false, script: [{ text: block }, { text: 'Done.' }] });
    const t = await turnFor(users.member!, 'echo please');
    await run(a, t);

    expect(a.models.calls[0]!.input.tools).toBeUndefined();
    expect(a.models.calls[0]!.input.stream?.holdToolCallText).toBe(true);
    expect(a.models.calls[0]!.messages[0]!.content).toContain('echo');
    // Results keep the tool role; the provider adapter writes them as text for such models.
    const [assistant, result] = a.models.calls[1]!.messages.slice(-2);
    expect(assistant).toMatchObject({ role: 'assistant', toolCalls: [{ name: 'echo', arguments: JSON.stringify({ text: 'from text' }) }] });
    expect(result).toEqual({ role: 'tool', content: 'echo: from text', name: 'echo', toolCallId: assistant!.toolCalls![0]!.id });
    expect((await messagesOf(t.session.id)).at(-1)).toMatchObject({ role: MessageRole.ASSISTANT, content: 'Done.' });
  });

  it('offers a GUEST no tools and takes a tool_calls block in their answer as plain text', async () => {
    const text = '{"tool_calls":[{"name":"echo","arguments":{"text":"sneaky"}}]}';
    const a = agent({ script: [{ text }] });
    const t = await turnFor(users.guest!, 'hello');
    const before = echoRuns.length;
    await run(a, t);
    expect(a.models.calls[0]!.input.tools).toBeUndefined();
    expect(echoRuns).toHaveLength(before);
    expect(a.out.replies.map((r) => r.text)).toEqual([text]);
  });

  it('checks trust where the tool runs: a call the sender may not make is refused and the model is told', async () => {
    const a = agent({ script: [{ toolCalls: [call('v1', 'vault', {})] }, { text: 'I may not open it.' }] });
    const t = await turnFor(users.member!, 'open the vault');
    await run(a, t);
    const result = a.models.calls[1]!.messages.at(-1)!;
    expect(result).toMatchObject({ role: 'tool', toolCallId: 'v1' });
    expect(result.content).toMatch(/^Refused: /);
    expect(result.content).not.toContain('the vault is open');
    expect(a.events.of(t.session.id, 'ToolCallEvent').at(-1)).toMatchObject({ tool: 'vault', outcome: 'refused' });

    const trusted = agent({ script: [{ toolCalls: [call('v2', 'vault', {})] }, { text: 'Open.' }] });
    const t2 = await turnFor(users.trusted!, 'open the vault');
    await run(trusted, t2);
    expect(trusted.models.calls[1]!.messages.at(-1)).toMatchObject({ role: 'tool', content: 'the vault is open' });
  });

  it('pauses on a tool that needs approval until it is decided, then goes on with the outcome', async () => {
    const a = agent({ script: [{ toolCalls: [call('l1', 'launch', { target: 'moon' })] }, { text: 'Launched.' }, { toolCalls: [call('l2', 'launch', { target: 'mars' })] }, { text: 'Not allowed.' }] });
    const t = await turnFor(users.member!, 'launch to the moon');
    const turn = run(a, t);
    const asked = await notices.nextNotice((n) => n.target.sessionId === t.session.id);
    expect(asked.text).toMatch(/^Approval needed for launch: \/approve \S+ allow_once\|allow_always\|deny/);
    expect(asked.target).toMatchObject({ channel: 'telegram', chatId: t.session.chatId, level: 'warn' });
    expect(a.models.calls).toHaveLength(1);
    expect(a.events.of(t.session.id, 'TurnFinished')).toEqual([]);

    const id = /\/approve (\S+)/.exec(asked.text)![1]!;
    await tools.approvals.decide(world.as(users.owner!), id, ToolApprovalDecision.ALLOW_ONCE);
    await turn;
    expect(a.models.calls[1]!.messages.at(-1)).toMatchObject({ role: 'tool', content: 'launched moon' });

    const t2 = await turnFor(users.member!, 'launch to mars');
    const second = run(a, t2);
    const asked2 = await notices.nextNotice((n) => n.target.sessionId === t2.session.id);
    await tools.approvals.decide(world.as(users.owner!), /\/approve (\S+)/.exec(asked2.text)![1]!, ToolApprovalDecision.DENY);
    await second;
    const denied = a.models.calls[3]!.messages.at(-1)!;
    expect(denied).toMatchObject({ role: 'tool', toolCallId: 'l2' });
    expect(denied.content).not.toContain('launched mars');
    expect(a.events.of(t2.session.id, 'ToolCallEvent').at(-1)).toMatchObject({ tool: 'launch', outcome: 'denied' });
  });

  it('stops after maxIterations tool rounds with a clear answer', async () => {
    const loopCall = (i: number) => ({ toolCalls: [call(`e${i}`, 'echo', { text: `round ${i}` })] });
    const a = agent({ maxIterations: 2, script: [loopCall(1), loopCall(2)] });
    const t = await turnFor(users.member!, 'loop forever');
    await run(a, t);
    expect(a.models.calls).toHaveLength(2);
    expect(a.out.replies[0]!.text).toBe('I stopped after 2 steps without a final answer. Ask me to continue if you want me to go on.');
  });

  it('ends a failed model call with a FAILED reply that says what went wrong, still delivered', async () => {
    const a = agent({ script: [{ error: new ModelApiError('upstream 503', { provider: 'scripted', model: 'm', status: 503 }) }] });
    const t = await turnFor(users.member!, 'anyone there?');
    await run(a, t);
    const rows = await messagesOf(t.session.id);
    expect(rows.at(-1)).toMatchObject({ role: MessageRole.ASSISTANT, status: MessageStatus.FAILED, content: '⚠️ The model provider (scripted) refused the request (HTTP 503). Please try again later.' });
    expect(rows[0]!.status).toBe(MessageStatus.DONE);
    expect(a.events.of(t.session.id, 'TurnFinished')[0]).toMatchObject({ status: 'failed', error: rows.at(-1)!.content });
    expect(a.out.replies.map((r) => r.text)).toEqual([rows.at(-1)!.content]);
    expect(a.out.typing.at(-1)).toMatch(/:off$/);
  });

  it('hands a context-length error to the compactor; when it compacted, the turn ends without a reply', async () => {
    const overflow = () => new ContextLengthError('too long', { provider: 'scripted', model: 'm', status: 400 });
    const asked: string[] = [];
    const compactor: TurnCompactor = { beforeTurn: async () => false, afterContextLengthError: async (_c, _s, _b, turnId) => (asked.push(turnId), true) };
    const a = agent({ compactor, script: [{ error: overflow() }] });
    const t = await turnFor(users.member!, 'a long story');
    await run(a, t);
    expect(asked).toEqual([t.turnId]);
    expect(a.out.replies).toEqual([]);
    expect(a.events.of(t.session.id, 'TurnFinished')[0]).toMatchObject({ status: 'cancelled', error: 'continued in a new session after compaction' });

    const noValve = agent({ script: [{ error: overflow() }] });
    const t2 = await turnFor(users.member!, 'a long story');
    await run(noValve, t2);
    expect(noValve.out.replies[0]!.text).toContain('too long for the model');
  });

  it('a stopped turn cancels its messages with a notice; a shutdown leaves them for the next worker', async () => {
    const stopper = new AbortController();
    const a = agent({
      script: [
        async (_input, signal) => {
          stopper.abort(new TurnAbortedError('/stop'));
          throw Object.assign(new Error('aborted'), { name: 'AbortError', aborted: signal?.aborted });
        },
      ],
    });
    const t = await turnFor(users.member!, 'stop me');
    await run(a, t, stopper.signal);
    expect((await messagesOf(t.session.id)).map((m) => [m.role, m.status])).toEqual([[MessageRole.USER, MessageStatus.CANCELLED]]);
    expect(a.events.of(t.session.id, 'Notice').map((e) => e.text)).toEqual(['Turn stopped (/stop).']);
    expect(a.events.of(t.session.id, 'TurnFinished')[0]).toMatchObject({ status: 'cancelled', replyMessageId: null });
    expect(a.out.replies).toEqual([]);

    const shutdown = new AbortController();
    const b = agent({ script: [async () => (shutdown.abort(new TurnAbortedError(TurnAbortedError.SHUTDOWN)), Promise.reject(new Error('aborted')))] });
    const t2 = await turnFor(users.member!, 'restart soon');
    await expect(run(b, t2, shutdown.signal)).rejects.toThrow('aborted');
    expect((await messagesOf(t2.session.id)).map((m) => m.status)).toEqual([MessageStatus.PROCESSING]);
    expect(b.events.of(t2.session.id, 'TurnFinished')).toEqual([]);
  });
});
