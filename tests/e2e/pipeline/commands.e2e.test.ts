import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { ChatRecorderServer } from '../../support/fakes/chat-recorder';
import { createUserWithToken, eventually, send, SEND_MESSAGE } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { EventCollector, type EventRecord } from '../../support/session-events';
import { CreateUserDocument, LinkIdentityDocument, SessionDocument, SetPluginSettingDocument } from '../../support/graphql/generated';
import { Message, MessageRole, MessageStatus } from '../../../server/modules/sessions';
import { registerRecorderChannel } from './pipeline-helpers';

const STOP_TURN = /* GraphQL */ `
  mutation Stop($sessionId: ID!) { stopTurn(sessionId: $sessionId) }
`;
const USAGE = /* GraphQL */ `
  query Usage($from: DateTimeISO!, $to: DateTimeISO!) { usage(from: $from, to: $to, groupBy: SESSION) { key calls inputTokens outputTokens } }
`;

const finished = (es: EventRecord[]) => es.filter((e) => e.__typename === 'TurnFinished');

/** Slash commands of issue 3 through `sendMessage` (and a platform channel for a GUEST), answered without a model call. */
describe('slash commands', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let recorder: ChatRecorderServer;
  let owner: GraphQLTestClient;
  let member: { id: string; token: string };
  let memberClient: GraphQLTestClient;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    recorder = await ChatRecorderServer.start();
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 16384, max_concurrency: 2 } } },
        tools: { shell: { enabled: true, allow: ['echo'] } },
        channels: { telegram: { dm_policy: 'open' } },
        log: { level: 'warn' },
      },
    });
    await registerRecorderChannel(t, 'telegram', recorder);
    owner = t.client(t.ownerToken);
    member = await createUserWithToken(owner, 'Mia Member', 'MEMBER');
    memberClient = t.client(member.token);
  });
  afterAll(async () => {
    await memberClient.close();
    await owner.close();
    await t.close();
    await model.close();
    await recorder.close();
  });

  /**
   * Runs `fn` and checks no model call came of it: none meanwhile, and no user message was stored
   * (a message reaches the model only as a stored, queued message, stored before `sendMessage` answers).
   */
  async function withoutModel<T>(fn: () => Promise<T>): Promise<T> {
    const userMessages = () => t.app.db.repo(t.app.systemCtx('test'), Message).countBy({ role: MessageRole.USER });
    const before = model.chatRequests().length;
    const stored = await userMessages();
    const out = await fn();
    expect(await userMessages()).toBe(stored);
    expect(model.chatRequests()).toHaveLength(before);
    return out;
  }

  it('/help lists the commands; unknown commands get a short help', async () => {
    const help = await withoutModel(() => send(memberClient, '/help'));
    expect(help.messageId).toBeNull();
    for (const cmd of ['/help', '/whoami', '/status', '/new (/clear, /reset)', '/stop', '/usage', '/tools', '/approve <id>']) expect(help.reply).toContain(cmd);
    const unknown = await withoutModel(() => send(memberClient, '/frobnicate now'));
    expect(unknown.reply).toMatch(/^Unknown command \/frobnicate\.\nCommands:/);
  });

  it('/whoami names the user, trust, identities and session key', async () => {
    const who = await withoutModel(() => send(memberClient, '/whoami'));
    expect(who.reply).toBe([`You are Mia Member (${member.id})`, 'Trust: MEMBER', 'Identities: (none)', `Session: web:${member.id}`].join('\n'));
  });

  it('/status names the configured model and says it is not the mock', async () => {
    const status = await withoutModel(() => send(memberClient, '/status'));
    expect(status.reply).toMatch(/^Model: fake\/fake-model\n/);
    expect(status.reply).not.toContain('mock');
    expect(status.reply).toContain('of 16384 tokens');
    expect(status.reply).toContain(`Session: web:${member.id}`);
    expect(status.reply).toContain('Turn running: no');
  });

  it('/usage reports the session\'s model calls and tokens (as the usage query does)', async () => {
    const user = await createUserWithToken(owner, 'Uma Usage', 'MEMBER');
    const client = t.client(user.token);
    const from = new Date(Date.now() - 1000);
    const zero = await send(client, '/usage');
    expect(zero.reply).toBe('This session: 0 model calls, 0 input tokens, 0 output tokens, 0 cache reads.\nSpent today: $0.00 (unlimited) · this month: $0.00 (unlimited)\nYour budget is unlimited.');
    const events = new EventCollector(client.wsClient(), zero.sessionId);
    model.enqueue({ text: 'counted', usage: { prompt_tokens: 42, completion_tokens: 9, cached_tokens: 5 } });
    await send(client, 'count me');
    await events.waitFor((es) => finished(es).length === 1);
    const usage = await withoutModel(() => send(client, '/usage'));
    // No price is configured for the fake model: tokens are counted, no cost is shown.
    expect(usage.reply!.split('\n')[0]).toBe('This session: 1 model calls, 42 input tokens, 9 output tokens, 5 cache reads.');
    const rows = dataOf(await client.http<{ usage: Array<{ key: string; calls: number; inputTokens: number; outputTokens: number }> }, unknown>(USAGE, { from, to: new Date(Date.now() + 60_000) })).usage;
    expect(rows).toEqual([{ key: zero.sessionId, calls: 1, inputTokens: 42, outputTokens: 9 }]);
    events.stop();
    await client.close();
  });

  it('/tools lists only the tools the sender may use on this channel', async () => {
    const mine = await withoutModel(() => send(memberClient, '/tools'));
    expect(mine.reply).toMatch(/^Tools you may use here:\n• current_time — /);
    expect(mine.reply!.split('\n').slice(1).map((l) => /^• (\w+)/.exec(l)?.[1]).sort()).toEqual(['current_time', 'document_search', 'memory_save', 'memory_search']);

    const all = (await send(owner, '/tools')).reply!;
    expect(all.split('\n').slice(1).map((l) => /^• (\w+)/.exec(l)?.[1]).sort()).toEqual(['current_time', 'delete_beat', 'document_search', 'http_request', 'list_beats', 'memory_save', 'memory_search', 'send_message', 'set_beat', 'shell', 'update_beat']);
    // Turned off for web chat: no longer listed there.
    dataOf(await owner.http(SetPluginSettingDocument, { input: { plugin: 'http_request', channel: 'web', enabled: false } }));
    try {
      expect((await send(owner, '/tools')).reply).not.toContain('http_request');
    } finally {
      dataOf(await owner.http(SetPluginSettingDocument, { input: { plugin: 'http_request', channel: 'web', enabled: true } }));
    }
  });

  it('/new archives the session, starts an empty one and announces the rotation; /clear and /reset do the same', async () => {
    const user = await createUserWithToken(owner, 'Nina New', 'MEMBER');
    const client = t.client(user.token);
    const first = await send(client, 'before the reset');
    const events = new EventCollector(client.wsClient(), first.sessionId);
    await events.waitFor((es) => finished(es).length === 1);

    const rotated = await withoutModel(() => send(client, '/new'));
    expect(rotated.reply).toBe('Started a new session. The old one is archived.');
    expect(rotated.sessionId).not.toBe(first.sessionId);
    await events.waitFor((es) => es.some((e) => e.__typename === 'SessionRotated'));
    expect(events.events.find((e) => e.__typename === 'SessionRotated')).toMatchObject({ previousSessionId: first.sessionId, newSessionId: rotated.sessionId, reason: 'new' });
    const old = dataOf(await client.http(SessionDocument, { id: first.sessionId })).session;
    const fresh = dataOf(await client.http(SessionDocument, { id: rotated.sessionId })).session;
    expect([old.status, fresh.status, fresh.key]).toEqual(['ARCHIVED', 'ACTIVE', old.key]);

    // The next message goes to the new session, whose history starts empty.
    const next = await send(client, 'after the reset');
    expect(next.sessionId).toBe(rotated.sessionId);
    const nextEvents = new EventCollector(client.wsClient(), rotated.sessionId);
    await nextEvents.waitFor((es) => finished(es).length === 1);
    const texts = (model.lastChatRequest()!.body!.messages ?? []).map((m) => String(m.content));
    expect(texts.some((c) => c.includes('after the reset'))).toBe(true);
    expect(texts.some((c) => c.includes('before the reset'))).toBe(false);
    // The archived session takes no more messages.
    const refused = await client.http(SEND_MESSAGE, { input: { text: 'old one', sessionId: first.sessionId } });
    expect(refused.errors?.[0]?.extensions?.code).toBe('CONFLICT');

    for (const alias of ['/clear', '/reset']) {
      const before = (await send(client, '/whoami')).sessionId;
      const after = await send(client, alias);
      expect(after.reply).toBe('Started a new session. The old one is archived.');
      expect(after.sessionId).not.toBe(before);
      expect(dataOf(await client.http(SessionDocument, { id: before })).session.status).toBe('ARCHIVED');
    }
    events.stop();
    nextEvents.stop();
    await client.close();
  });

  async function hangingTurn(name: string): Promise<{ client: GraphQLTestClient; sessionId: string; messageId: string; events: EventCollector }> {
    const user = await createUserWithToken(owner, name, 'MEMBER');
    const client = t.client(user.token);
    model.enqueue({ hang: true });
    const sent = await send(client, 'please hang');
    const events = new EventCollector(client.wsClient(), sent.sessionId);
    await eventually(() => model.chatRequests().some((r) => r.endedAt === null && JSON.stringify(r.body?.messages).includes('please hang')), 10_000, 'the hanging call');
    return { client, sessionId: sent.sessionId, messageId: sent.messageId!, events };
  }

  async function expectStoppedThenWorking(s: { client: GraphQLTestClient; sessionId: string; messageId: string; events: EventCollector }): Promise<void> {
    await s.events.waitFor((es) => finished(es).length === 1);
    expect(finished(s.events.events)[0]).toMatchObject({ status: 'cancelled', replyMessageId: null });
    const repo = t.app.db.repo(t.app.systemCtx('test'), Message);
    expect((await repo.findOneByOrFail({ id: s.messageId })).status).toBe(MessageStatus.CANCELLED);
    expect(await repo.countBy({ sessionId: s.sessionId, role: MessageRole.ASSISTANT })).toBe(0);
    // The model call itself was cut off.
    await eventually(() => model.chatRequests().find((r) => JSON.stringify(r.body?.messages).includes('please hang'))?.aborted, 5000, 'the model call to be aborted');

    await send(s.client, 'and now?');
    await s.events.waitFor((es) => finished(es).length === 2);
    expect(finished(s.events.events)[1]).toMatchObject({ status: 'done' });
    const reply = await repo.findOneByOrFail({ sessionId: s.sessionId, role: MessageRole.ASSISTANT });
    expect([reply.content, reply.status]).toEqual(['Echo: and now?', MessageStatus.DONE]);
    s.events.stop();
    await s.client.close();
  }

  it('/stop aborts the running turn; the message is CANCELLED and the next one is answered', async () => {
    const s = await hangingTurn('Stan Stop');
    expect((await send(s.client, '/status')).reply).toContain('Turn running: yes');
    expect((await send(s.client, '/stop')).reply).toBe('Stopping the running turn.');
    await expectStoppedThenWorking(s);
    // The session is free once its drain has let go of it (right after TurnFinished).
    await eventually(async () => (await send(s.client, '/status')).reply?.includes('Turn running: no'), 5000, 'the session to be free');
    expect((await send(s.client, '/stop')).reply).toBe('Nothing is running.');
  });

  it('the stopTurn mutation does the same', async () => {
    const s = await hangingTurn('Sue StopTurn');
    expect(dataOf(await s.client.http<{ stopTurn: boolean }, unknown>(STOP_TURN, { sessionId: s.sessionId })).stopTurn).toBe(true);
    await expectStoppedThenWorking(s);
    const c = t.client((await createUserWithToken(owner, 'Sue again', 'MEMBER')).token);
    const idle = await send(c, '/whoami');
    expect(dataOf(await c.http<{ stopTurn: boolean }, unknown>(STOP_TURN, { sessionId: idle.sessionId })).stopTurn).toBe(false);
    // Someone else's session cannot be stopped.
    expect((await c.http(STOP_TURN, { sessionId: s.sessionId })).errors?.[0]?.extensions?.code).toMatch(/FORBIDDEN|NOT_FOUND/);
    await c.close();
  });

  it('a GUEST on a platform channel may use /help and /whoami only', async () => {
    const guestId = dataOf(await owner.http(CreateUserDocument, { input: { displayName: 'Gus Guest', trust: 'GUEST' } })).createUser.id;
    dataOf(await owner.http(LinkIdentityDocument, { input: { userId: guestId, channel: 'telegram', handle: 'tg-gus' } }));
    const say = (text: string, n: number) =>
      t.app.chat!.pipeline.handle({ channel: 'telegram', chatId: 'tg-gus', chatKind: 'dm', sender: { handle: 'tg-gus' }, text, platformMessageId: `gus-${n}` });
    const results = await withoutModel(async () => [await say('/help', 1), await say('/whoami', 2), await say('/status', 3), await say('/tools', 4)]);
    expect(results.map((r) => r.replies)).toEqual([
      ['Commands: /help, /whoami'],
      [[`You are Gus Guest (${guestId})`, 'Trust: GUEST', 'Identities: telegram:tg-gus', `Session: agent:main:telegram:dm:${guestId}`].join('\n')],
      ['Only /help and /whoami are available to you.'],
      ['Only /help and /whoami are available to you.'],
    ]);
    expect(results.every((r) => r.ticket === null)).toBe(true);
    // The answers reach the chat.
    await eventually(() => recorder.chunks.filter((c) => c.chatId === 'tg-gus').length === 4, 10_000, 'four deliveries');
    expect(recorder.chunks.filter((c) => c.chatId === 'tg-gus').map((c) => c.text.split('\n')[0])).toEqual([
      'Commands: /help, /whoami',
      `You are Gus Guest (${guestId})`,
      'Only /help and /whoami are available to you.',
      'Only /help and /whoami are available to you.',
    ]);
  });
});

describe('/status without a configured model', () => {
  let t: TestApp;

  beforeAll(async () => {
    // Hermetic: the probe for a local Ollama finds nothing, whatever runs on this machine.
    const realFetch = globalThis.fetch;
    const spy = jest.spyOn(globalThis, 'fetch').mockImplementation((input, init) =>
      String(input instanceof Request ? input.url : input).includes(':11434/') ? Promise.reject(new TypeError('fetch failed')) : realFetch(input, init),
    );
    try {
      t = await startTestApp({ config: { log: { level: 'error' } } });
    } finally {
      spy.mockRestore();
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it('says the mock provider answers, and the mock does answer', async () => {
    const owner = t.client(t.ownerToken);
    const status = await send(owner, '/status');
    expect(status.reply).toMatch(/^Model: mock\/mock-1 \(mock provider: no model is configured\)\n/);
    const events = new EventCollector(owner.wsClient(), status.sessionId);
    await send(owner, 'hello mock');
    await events.waitFor((es) => finished(es).length === 1);
    expect(finished(events.events)[0]).toMatchObject({ status: 'done' });
    const reply = events.events.find((e) => e.__typename === 'MessageAdded' && e.role === 'ASSISTANT');
    expect(String(reply?.content).length).toBeGreaterThan(0);
    events.stop();
    await owner.close();
  });
});
