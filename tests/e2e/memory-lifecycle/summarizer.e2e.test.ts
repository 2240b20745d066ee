import { startTestApp, type TestApp } from '../../support/test-app';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { ChatRecorderServer } from '../../support/fakes/chat-recorder';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { EventCollector } from '../../support/session-events';
import { LinkIdentityDocument, MemoriesDocument } from '../../support/graphql/generated';
import { Memory } from '../../../server/modules/memory';
import { registerRecorderChannel } from '../pipeline/pipeline-helpers';
import { makeQueue } from '../../../jobs/bull';
import { QUEUES } from '../../../jobs/queues';
import { callsOf, lastUserText, scriptModel, summarizerInput } from './summarizer-model';

type MemoryRow = { type: string; scope: string; userId: string | null; groupId: string | null; content: string; importance: number };

/** GraphQL rows without ids, enums as GraphQL names (FACT, USER). */
function rowsOf(edges: Array<{ node: MemoryRow & { id: string } }>): MemoryRow[] {
  return edges.map(({ node: { id: _id, ...rest } }) => rest);
}

async function myMemories(client: GraphQLTestClient): Promise<MemoryRow[]> {
  return rowsOf(dataOf(await client.http(MemoriesDocument, { first: 100 })).memories.edges as never);
}

/** Sends a message through sendMessage and waits until its turn finished. */
async function exchange(client: GraphQLTestClient, text: string): Promise<{ sessionId: string; messageId: string }> {
  const sent = await send(client, text);
  const events = new EventCollector(client.wsClient(), sent.sessionId);
  await events.waitFor((es) => {
    const started = es.find((e) => e.__typename === 'TurnStarted' && (e.messageIds as string[]).includes(sent.messageId!));
    return !!started && es.some((e) => e.__typename === 'TurnFinished' && e.turnId === started.turnId);
  });
  events.stop();
  return { sessionId: sent.sessionId, messageId: sent.messageId! };
}

/** Issue 5, acceptance 3 (auto mode): the summarizer writes typed memories of the right owner after each exchange. */
describe('summarizer (session.summarizer_mode: auto)', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let recorder: ChatRecorderServer;
  let owner: GraphQLTestClient;
  const extractAnswers = new Map<string, string>();

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    recorder = await ChatRecorderServer.start();
    // The summarizer's answer is chosen by the last user line of the conversation it is shown.
    scriptModel(model, {
      extract: (req) => {
        const input = summarizerInput(req);
        for (const [marker, answer] of extractAnswers) if (input.includes(marker)) return answer;
        return '{"memories":[]}';
      },
    });
    t = await startTestApp({
      config: {
        // Background calls wait this long after the last interactive one (default 5 s).
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 2 } }, background_grace_ms: 100 },
        // One summarizer call per exchange here; batching has its own tests below.
        session: { summarizer_mode: 'auto', summarizer_batch: 1 },
        channels: { telegram: { group_policy: 'open' } },
        log: { level: 'warn' },
      },
    });
    await registerRecorderChannel(t, 'telegram', recorder);
    owner = t.client(t.ownerToken);
  });
  afterAll(async () => {
    await owner.close();
    await t.close();
    await model.close();
    await recorder.close();
  });

  it('condenses each exchange into memories of the right type, owned by the user of the DM', async () => {
    const alice = await createUserWithToken(owner, 'Alice', 'MEMBER');
    const client = t.client(alice.token);
    extractAnswers.set('my favourite colour is teal', JSON.stringify({ memories: [{ type: 'fact', content: "Alice's favourite colour is teal.", importance: 0.8 }] }));
    extractAnswers.set(
      'stop using bullet points',
      [
        'Sure! Here is what I would keep:',
        '```json',
        JSON.stringify({
          memories: [
            { type: 'lesson', content: 'Alice wants answers without bullet points.', importance: '0.6' },
            { type: 'reminder', content: 'Remind Alice to renew her passport on 2026-05-01.', importance: 9 },
            { type: 'gossip', content: 'An item of a type that does not exist.' },
            { type: 'fact', content: '' },
          ],
        }),
        '```',
      ].join('\n'),
    );

    const first = await exchange(client, 'FYI my favourite colour is teal');
    const facts = await eventually(async () => {
      const rows = await myMemories(client);
      return rows.length >= 1 ? rows : undefined;
    }, 15_000, 'a memory from the first exchange');
    expect(facts).toEqual([{ type: 'FACT', scope: 'USER', userId: alice.id, groupId: null, content: "Alice's favourite colour is teal.", importance: 0.8 }]);
    const stored = await t.app.db.repo(t.app.systemCtx('test'), Memory).findOneByOrFail({ content: "Alice's favourite colour is teal." });
    expect(stored.sourceSessionId).toBe(first.sessionId);

    // The summarizer saw the exchange (user line and reply) and ran at summarizer priority on the summarizer role.
    const [call] = callsOf(model, 'extract');
    expect(summarizerInput(call!)).toContain('[Alice] FYI my favourite colour is teal');
    expect(summarizerInput(call!)).toContain('[assistant] Echo: FYI my favourite colour is teal');

    await exchange(client, 'please stop using bullet points, and remind me about my passport');
    const all = await eventually(async () => {
      const rows = await myMemories(client);
      return rows.length >= 3 ? rows : undefined;
    }, 15_000, 'memories from the second exchange');
    expect(all.map((m) => [m.type, m.content, m.importance]).sort()).toEqual([
      ['FACT', "Alice's favourite colour is teal.", 0.8],
      ['LESSON', 'Alice wants answers without bullet points.', 0.6],
      ['REMINDER', 'Remind Alice to renew her passport on 2026-05-01.', 0.9],
    ]);
    // One summarizer call per exchange, each given only its own exchange.
    const extracts = callsOf(model, 'extract').filter((r) => summarizerInput(r).includes('[Alice]'));
    expect(extracts).toHaveLength(2);
    expect(summarizerInput(extracts[1]!)).not.toContain('favourite colour');
    await client.close();
  });

  it('a malformed summarizer answer is logged and skipped; chat goes on and later exchanges are summarized', async () => {
    const bob = await createUserWithToken(owner, 'Bob', 'MEMBER');
    const client = t.client(bob.token);
    extractAnswers.set('bob says something odd', 'I am sorry, I cannot produce JSON today. {"memories": [unterminated');
    extractAnswers.set('bob likes rust', '{"memories":[{"type":"fact","content":"Bob likes Rust.","importance":0.5}]}');
    const before = callsOf(model, 'extract').length;
    await exchange(client, 'bob says something odd');
    await eventually(() => callsOf(model, 'extract').length > before && callsOf(model, 'extract').at(-1)!.endedAt !== null, 15_000, 'the summarizer call');
    await eventually(() => t.logs.lines.some((l) => /summarizer answer was not usable/.test(l)), 10_000, 'the warning');
    await exchange(client, 'bob likes rust');
    const rows = await eventually(async () => {
      const r = await myMemories(client);
      return r.length ? r : undefined;
    }, 15_000, "Bob's memory");
    expect(rows.map((m) => m.content)).toEqual(['Bob likes Rust.']);
    await client.close();
  });

  it('group chats write group memories, never a member\'s private ones', async () => {
    const carol = await createUserWithToken(owner, 'Carol', 'MEMBER');
    dataOf(await owner.http(LinkIdentityDocument, { input: { userId: carol.id, channel: 'telegram', handle: 'tg-carol' } }));
    extractAnswers.set('the team standup moves to 9:30', '{"memories":[{"type":"fact","content":"The team standup is at 9:30.","importance":0.7}]}');
    const before = model.chatRequests().filter((r) => lastUserText(r).includes('standup')).length;
    await t.app.chat!.pipeline.handle({
      channel: 'telegram',
      chatId: 'grp-42',
      chatKind: 'group',
      sender: { handle: 'tg-carol', displayName: 'Carol' },
      text: 'the team standup moves to 9:30',
      mentionsBot: true,
      platformMessageId: 'g-1',
    });
    await eventually(() => recorder.chunks.some((c) => c.chatId === 'grp-42'), 15_000, 'the group reply');
    expect(model.chatRequests().filter((r) => lastUserText(r).includes('standup')).length).toBeGreaterThan(before);
    const group = await eventually(async () => {
      const rows = rowsOf(dataOf(await owner.http(MemoriesDocument, { first: 50, filter: { scope: 'GROUP' as never } })).memories.edges as never);
      return rows.length ? rows : undefined;
    }, 15_000, 'the group memory');
    expect(group).toEqual([
      { type: 'FACT', scope: 'GROUP', userId: null, groupId: 'agent:main:telegram:group:grp-42', content: 'The team standup is at 9:30.', importance: 0.7 },
    ]);
    const carolClient = t.client(carol.token);
    expect(await myMemories(carolClient)).toEqual([]);
    await carolClient.close();
  });
});

describe('summarizer batches (session.summarizer_batch, session.summarizer_idle_seconds)', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    scriptModel(model, { extract: () => '{"memories":[]}' });
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 2 } }, background_grace_ms: 50 },
        session: { summarizer_mode: 'auto', summarizer_batch: 3, summarizer_idle_seconds: 600 },
        log: { level: 'warn' },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  const erinCalls = () => callsOf(model, 'extract').filter((r) => summarizerInput(r).includes('[Erin]'));

  it('condenses a full batch in one call, and a partial one once the session is quiet', async () => {
    const erin = await createUserWithToken(t.client(t.ownerToken), 'Erin', 'MEMBER');
    const client = t.client(erin.token);
    const env = t.app.chat!.queueEnv;
    const queue = makeQueue(env, QUEUES.summarizer);
    const first = await exchange(client, 'erin one: I water the plants on Mondays');
    await exchange(client, 'erin two: the plants are ferns');
    const pending = `${env.prefix}:summarizer:pending:${first.sessionId}`;
    // Two exchanges wait for a third (or ten idle minutes): one delayed job, no summarizer call yet.
    expect(await env.redis.llen(pending)).toBe(2);
    expect(await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).toEqual({ waiting: 0, active: 0, delayed: 1, prioritized: 0 });
    expect(erinCalls()).toHaveLength(0);

    await exchange(client, 'erin three: and one cactus');
    await eventually(async () => erinCalls().length === 1 && (await env.redis.llen(pending)) === 0, 15_000, 'the batch of three');
    const [batch] = erinCalls();
    for (const line of ['erin one', 'erin two', 'erin three']) expect(summarizerInput(batch!)).toContain(line);
    expect(summarizerInput(batch!)).toContain('[assistant] Echo: erin three: and one cactus');
    const idle = async () => Object.values(await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).every((n) => n === 0);
    await eventually(idle, 10_000, 'the summarizer queue idle after the batch');
    expect(erinCalls()).toHaveLength(1);

    // A partial batch is condensed once the session has been quiet for summarizer_idle_seconds.
    t.app.config.session.summarizer_idle_seconds = 1;
    await exchange(client, 'erin four: I am away next week');
    await eventually(() => erinCalls().length === 2, 15_000, 'the partial batch after the quiet second');
    const partial = erinCalls()[1]!;
    expect(summarizerInput(partial)).toContain('erin four');
    expect(summarizerInput(partial)).not.toContain('erin three');
    await queue.close();
    await client.close();
  });
});

describe('summarizer (session.summarizer_mode: manual)', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    scriptModel(model, { extract: () => '{"memories":[{"type":"fact","content":"Should never be written.","importance":0.5}]}' });
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 2 } } },
        session: { summarizer_mode: 'manual' },
        log: { level: 'warn' },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  it('writes no per-turn summary', async () => {
    const dave = await createUserWithToken(t.client(t.ownerToken), 'Dave', 'MEMBER');
    const client = t.client(dave.token);
    await exchange(client, 'remember that I live in Oslo');
    await exchange(client, 'and that I have two cats');
    // A session's turns run in order, each told to the summarizer hook before the next starts: once a
    // third exchange is done, a job for the first two would be on the summarizer queue.
    await exchange(client, 'thanks');
    const queue = makeQueue(t.app.chat!.queueEnv, QUEUES.summarizer);
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed');
    await queue.close();
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
    expect(callsOf(model, 'extract')).toHaveLength(0);
    expect(await myMemories(client)).toEqual([]);
    await client.close();
  });
});
