import { startTestApp, type TestApp } from '../support/test-app';
import { dataOf, type GraphQLTestClient } from '../support/graphql-client';
import { FakeOpenAIServer } from '../support/fakes/fake-openai-server';
import { EventCollector } from '../support/session-events';
import { Message } from '../../server/modules/sessions';

const SEND = /* GraphQL */ `
  mutation Send($input: SendMessageInput!) {
    sendMessage(input: $input) { sessionId messageId status duplicate reply }
  }
`;
const MESSAGES = /* GraphQL */ `
  query Msgs($sessionId: ID!) { messages(sessionId: $sessionId) { edges { node { id role content status } } } }
`;

type SendResult = { sendMessage: { sessionId: string; messageId: string | null; status: string; duplicate: boolean; reply: string | null } };

describe('chat over GraphQL with live replies', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let owner: GraphQLTestClient;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start({ chunks: 5, chunkDelayMs: 20 });
    t = await startTestApp({
      config: { ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 8192, max_concurrency: 2 } } } },
    });
    owner = t.client(t.ownerToken);
  });
  afterAll(async () => {
    await owner.close();
    await t.close();
    await model.close();
  });

  it('streams TurnStarted, ReplyDelta…, MessageAdded, TurnFinished in order and stores the reply with usage', async () => {
    // A first message creates the web session; its id is then known for the subscription.
    const first = dataOf(await owner.http<SendResult, unknown>(SEND, { input: { text: '/whoami' } })).sendMessage;
    expect(first.reply).toContain('Trust: OWNER');
    const events = new EventCollector(owner.wsClient(), first.sessionId);
    model.enqueue({ text: 'Hello there, this is a streamed answer.', chunks: 6, chunkDelayMs: 30, usage: { prompt_tokens: 42, completion_tokens: 9 } } as never);
    const sent = dataOf(await owner.http<SendResult, unknown>(SEND, { input: { text: 'Say hello' } })).sendMessage;
    expect(sent.status).toBe('QUEUED');
    const all = await events.waitFor((es) => es.some((e) => e.__typename === 'TurnFinished'));
    const kinds = all.map((e) => e.__typename).filter((k) => k !== 'Notice');
    const started = kinds.indexOf('TurnStarted');
    const replyAdded = all.findIndex((e) => e.__typename === 'MessageAdded' && e.role === 'ASSISTANT');
    expect(started).toBeGreaterThanOrEqual(0);
    expect(kinds.slice(started + 1).filter((k) => k === 'ReplyDelta').length).toBeGreaterThan(1);
    const lastDelta = all.map((e) => e.__typename).lastIndexOf('ReplyDelta');
    expect(lastDelta).toBeLessThan(replyAdded);
    expect(replyAdded).toBeLessThan(all.findIndex((e) => e.__typename === 'TurnFinished'));
    const text = all.filter((e) => e.__typename === 'ReplyDelta').map((e) => e.text).join('');
    expect(text).toBe('Hello there, this is a streamed answer.');
    const seqs = all.map((e) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    events.stop();

    const msgs = dataOf(await owner.http<{ messages: { edges: Array<{ node: { role: string; content: string; status: string } }> } }, unknown>(MESSAGES, { sessionId: sent.sessionId }));
    const nodes = msgs.messages.edges.map((e) => e.node);
    expect(nodes.map((n) => [n.role, n.status])).toEqual([
      ['USER', 'DONE'],
      ['ASSISTANT', 'DONE'],
    ]);
    expect(nodes[1]!.content).toBe('Hello there, this is a streamed answer.');
    const stored = await t.app.db.repo(t.app.systemCtx('test'), Message).findOneByOrFail({ sessionId: sent.sessionId, role: 'ASSISTANT' as never });
    expect(stored.inputTokens).toBe(42);
    expect(stored.outputTokens).toBe(9);
    expect(stored.usageEstimated).toBe(false);
    // The model saw the user's text.
    const request = model.lastChatRequest()!;
    expect(JSON.stringify(request.body!.messages)).toContain('Say hello');
  });

  it('a subscriber that reconnects with afterSeq mid-turn loses no delta', async () => {
    const session = dataOf(await owner.http<SendResult, unknown>(SEND, { input: { text: '/status' } })).sendMessage.sessionId;
    const reply = 'one two three four five six seven eight nine ten';
    model.enqueue({ text: reply, chunks: 10, chunkDelayMs: 60 } as never);
    // Everything kept for the session so far (earlier turns), then the new turn's events after it.
    const first = new EventCollector(owner.wsClient(), session, 0);
    const sent = dataOf(await owner.http<SendResult, unknown>(SEND, { input: { text: 'count to ten' } })).sendMessage;
    const started = (es: typeof first.events) => es.find((e) => e.__typename === 'TurnStarted' && (e.messageIds as string[]).includes(sent.messageId!));
    const turnDeltas = (es: typeof first.events) => es.filter((e) => e.__typename === 'ReplyDelta' && e.turnId === started(es)?.turnId);
    await first.waitFor((es) => turnDeltas(es).length >= 2);
    first.stop();
    const lastSeen = Math.max(...first.events.map((e) => e.seq));
    const second = new EventCollector(owner.wsClient(), session, lastSeen);
    const turnId = started(first.events)!.turnId;
    await second.waitFor((es) => es.some((e) => e.__typename === 'TurnFinished' && e.turnId === turnId));
    second.stop();
    const all = [...first.events, ...second.events];
    const deltas = all.filter((e) => e.__typename === 'ReplyDelta' && e.turnId === turnId);
    expect(deltas.map((d) => d.text).join('')).toBe(reply);
    expect(new Set(all.map((e) => e.seq)).size).toBe(all.length);
  });
});

describe('a disabled web channel', () => {
  it('refuses sendMessage with FORBIDDEN and a message naming the config key', async () => {
    const t = await startTestApp({ config: { channels: { web: { enabled: false } } } });
    try {
      const res = await t.client(t.ownerToken).http<SendResult, unknown>(SEND, { input: { text: 'hello' } });
      expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(res.errors?.[0]?.message).toContain('channels.web.enabled');
    } finally {
      await t.close();
    }
  });
});
