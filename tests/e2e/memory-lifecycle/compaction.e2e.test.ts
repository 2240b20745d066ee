import { startTestApp, type TestApp } from '../../support/test-app';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { FakeOpenAIServer, FakeReplies, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { EventCollector, type EventRecord } from '../../support/session-events';
import { ChatRecorderServer } from '../../support/fakes/chat-recorder';
import { LinkIdentityDocument, MemoriesDocument, MessagesDocument, SessionDocument } from '../../support/graphql/generated';
import { registerRecorderChannel } from '../pipeline/pipeline-helpers';
import { hasAllSections, SUMMARY_SECTIONS } from '../../../server/modules/summarizer';
import { callKind, callsOf, lastUserText, scriptModel, summarizerInput, turnOf, words } from './summarizer-model';

type Node = { id: string; role: string; content: string; status: string };

async function messagesOf(client: GraphQLTestClient, sessionId: string): Promise<Node[]> {
  return dataOf(await client.http(MessagesDocument, { sessionId, first: 200 })).messages.edges.map((e) => e.node as Node);
}

async function statusOf(client: GraphQLTestClient, id: string): Promise<string> {
  return dataOf(await client.http(SessionDocument, { id })).session.status;
}

/** Sends a message and waits until its turn finished in the session it went to; returns that session. */
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


function rotationOf(events: EventRecord[]): EventRecord | undefined {
  return events.find((e) => e.__typename === 'SessionRotated');
}

function systemMessages(req: RecordedRequest): string[] {
  return (req.body?.messages ?? []).filter((m) => m.role === 'system').map((m) => String(m.content));
}


/** Issue 5, acceptance 4: compaction archives the old transcript and starts a new session with the summary and the recent turns. */
describe('compaction with /compact', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    // The model's summary uses other heading styles, leaves out "Pending asks" and one identifier.
    scriptModel(model, {
      extract: () => '{"memories":[{"type":"fact","content":"The Falcon project uses PostgreSQL 16.","importance":0.9}]}',
      compact: () =>
        [
          '**Decisions:**',
          '- Use PostgreSQL 16 for Falcon.',
          '**Open tasks:**',
          '- Migrate the orders table.',
          '### Constraints',
          '- Budget: 500 EUR per month.',
          '## Exact identifiers',
          '- FAL-123',
        ].join('\n'),
    });
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 8192, max_concurrency: 2 } } },
        // A short history window: the seeded summary must stay in the prompt anyway.
        session: { summarizer_mode: 'manual', compact_keep_turns: 2, history_turns: 2 },
        log: { level: 'warn' },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  it('flushes memories, writes a five-section summary, archives the old session and seeds the new one', async () => {
    const user = await createUserWithToken(t.client(t.ownerToken), 'Fiona', 'MEMBER');
    const client = t.client(user.token);
    const { sessionId: old } = await exchange(client, 'For Falcon (ticket FAL-123) we decided on PostgreSQL 16');
    await exchange(client, 'The new table is called `orders_v2`, see https://example.com/falcon/schema');
    await exchange(client, 'Which region should host it?');
    const oldEvents = new EventCollector(client.wsClient(), old);

    const compacted = await send(client, '/compact keep the database details');
    expect(compacted.messageId).toBeNull();
    expect(compacted.reply).toMatch(/^🗜️ Compacted: 1 new memory saved .* last 4 message\(s\)/);
    const next = compacted.sessionId;
    expect(next).not.toBe(old);

    // SessionRotated on the old session; the old one is archived and still readable in full.
    await oldEvents.waitFor((es) => !!rotationOf(es));
    expect(rotationOf(oldEvents.events)).toMatchObject({ previousSessionId: old, newSessionId: next, reason: 'compact' });
    oldEvents.stop();
    expect(await statusOf(client, old)).toBe('ARCHIVED');
    expect(await statusOf(client, next)).toBe('ACTIVE');
    expect((await messagesOf(client, old)).map((m) => [m.role, m.content])).toEqual([
      ['USER', 'For Falcon (ticket FAL-123) we decided on PostgreSQL 16'],
      ['ASSISTANT', 'Echo: For Falcon (ticket FAL-123) we decided on PostgreSQL 16'],
      ['USER', 'The new table is called `orders_v2`, see https://example.com/falcon/schema'],
      ['ASSISTANT', 'Echo: The new table is called `orders_v2`, see https://example.com/falcon/schema'],
      ['USER', 'Which region should host it?'],
      ['ASSISTANT', 'Echo: Which region should host it?'],
    ]);

    // The memory flush ran before the summary; the summary was asked with the user's instructions.
    const calls = model.chatRequests().map(callKind).filter((k) => k !== 'main');
    expect(calls).toEqual(['extract', 'compact']);
    const [compactCall] = callsOf(model, 'compact');
    expect(systemMessages(compactCall!)[0]).toContain('keep the database details');
    expect(summarizerInput(compactCall!)).toContain('[Fiona] For Falcon (ticket FAL-123) we decided on PostgreSQL 16');

    // The new session: the summary (five sections, in order) as a SYSTEM message, then the last two turns.
    const seeded = await messagesOf(client, next);
    expect(seeded.map((m) => m.role)).toEqual(['SYSTEM', 'USER', 'ASSISTANT', 'USER', 'ASSISTANT']);
    expect(seeded.slice(1).map((m) => m.content)).toEqual([
      'The new table is called `orders_v2`, see https://example.com/falcon/schema',
      'Echo: The new table is called `orders_v2`, see https://example.com/falcon/schema',
      'Which region should host it?',
      'Echo: Which region should host it?',
    ]);
    const summary = seeded[0]!.content;
    expect(hasAllSections(summary)).toBe(true);
    expect(SUMMARY_SECTIONS.map((s) => summary.indexOf(`## ${s}`))).toEqual([...SUMMARY_SECTIONS.map((s) => summary.indexOf(`## ${s}`))].sort((a, b) => a - b));
    expect(summary).toContain('- Use PostgreSQL 16 for Falcon.');
    expect(summary).toMatch(/## Pending asks\n- none/);
    // Identifiers the model dropped are kept verbatim.
    for (const id of ['FAL-123', 'orders_v2', 'https://example.com/falcon/schema']) expect(summary).toContain(id);

    // The summary and the flushed fact are memories of the user.
    const memories = dataOf(await client.http(MemoriesDocument, { first: 20 })).memories.edges.map((e) => e.node);
    expect(memories.map((m) => m.type).sort()).toEqual(['FACT', 'SUMMARY']);
    expect(memories.find((m) => m.type === 'SUMMARY')!.content).toBe(summary.slice(summary.indexOf('## Decisions')));

    // /memory shows it; the next turn's prompt carries it and the kept turns, not the older ones.
    const memory = await send(client, '/memory');
    expect(memory.sessionId).toBe(next);
    expect(memory.reply).toBe(summary);
    const after = await exchange(client, 'Let us continue');
    expect(after.sessionId).toBe(next);
    const prompt = model.chatRequests().filter((r) => callKind(r) === 'main').at(-1)!;
    expect(systemMessages(prompt).some((s) => s.includes('## Exact identifiers'))).toBe(true);
    const text = JSON.stringify(prompt.body!.messages);
    expect(text).toContain('Which region should host it?');
    expect(text).not.toContain('Echo: For Falcon');
    for (const n of [1, 2, 3]) await exchange(client, `later message ${n}`);
    const later = model.chatRequests().filter((r) => callKind(r) === 'main').at(-1)!;
    expect(JSON.stringify(later.body!.messages)).not.toContain('Which region should host it?');
    expect(systemMessages(later).some((s) => s.includes('## Exact identifiers'))).toBe(true);
    await client.close();
  });

  it('/compact on a session with nothing in it changes nothing; while a turn runs it waits for the turn', async () => {
    const user = await createUserWithToken(t.client(t.ownerToken), 'Gil', 'MEMBER');
    const client = t.client(user.token);
    const empty = await send(client, '/compact');
    expect(empty.reply).toBe('⚠️ There is nothing to compact in this session yet.');
    await exchange(client, 'first things first');
    model.enqueue(FakeReplies.hang());
    const sent = await send(client, 'please hang for a while');
    await eventually(() => model.chatRequests().some((r) => lastUserText(r) === 'please hang for a while'), 10_000, 'the hanging turn');
    const busy = await send(client, '/compact');
    expect(busy.reply).toMatch(/^🗜️ A turn is running: this session will be compacted as soon as it has finished/);
    expect(busy.sessionId).toBe(sent.sessionId);
    expect(await statusOf(client, sent.sessionId)).toBe('ACTIVE');
    await send(client, '/stop');
    await turnOf(client, sent.sessionId, sent.messageId!);
    await eventually(async () => (await statusOf(client, sent.sessionId)) === 'ARCHIVED', 15_000, 'the queued compaction after the turn');
    await client.close();
  });
});

/** Issue 5, acceptance 3 (manual mode): the safety valve. */
describe('the compaction safety valve (session.summarizer_mode: manual)', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let recorder: ChatRecorderServer;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    recorder = await ChatRecorderServer.start();
    scriptModel(model, {
      main: (req) => (lastUserText(req).includes('always too long') ? FakeReplies.contextLength(1024) : { text: `Echo: ${lastUserText(req)}` }),
    });
    t = await startTestApp({
      config: {
        // A small window, with room for the schemas of the tools a MEMBER is offered (current_time, memory_search,
        // memory_save, document_search), which count against the prompt budget.
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 1600, max_concurrency: 2 } } },
        session: { summarizer_mode: 'manual', compact_threshold: 0.9, compact_keep_turns: 1 },
        log: { level: 'warn' },
      },
    });
    await registerRecorderChannel(t, 'telegram', recorder);
  });
  afterAll(async () => {
    await t.close();
    await model.close();
    await recorder.close();
  });
  beforeEach(() => model.reset());

  it('compacts before a turn once the prompt reaches the threshold, with a notice; the message is answered in the new session', async () => {
    const user = await createUserWithToken(t.client(t.ownerToken), 'Hana', 'MEMBER');
    const client = t.client(user.token);
    let sessionId = (await send(client, '/whoami')).sessionId;
    const oldEvents = new EventCollector(client.wsClient(), sessionId);
    let trigger: { messageId: string; text: string } | null = null;
    for (let i = 0; i < 20 && !trigger; i++) {
      const text = `part ${i}: ${words(40, `w${i}x`)}`;
      const sent = await send(client, text);
      expect(sent.sessionId).toBe(sessionId);
      const events = await turnOf(client, sessionId, sent.messageId!);
      if (rotationOf(events)) trigger = { messageId: sent.messageId!, text };
    }
    expect(trigger).not.toBeNull();
    await oldEvents.waitFor((es) => !!rotationOf(es));
    const rotated = rotationOf(oldEvents.events)!;
    expect(rotated.reason).toBe('context-threshold');
    const notices = oldEvents.events.filter((e) => e.__typename === 'Notice' && String(e.text).startsWith('🗜️'));
    expect(notices.map((n) => n.text)).toEqual([expect.stringMatching(/^🗜️ This conversation reached about \d+% of the model's context window, so I compacted it/)]);
    // The notice comes before the rotation; the turn in the old session ends without a reply.
    expect(notices[0]!.seq).toBeLessThan(rotated.seq);
    const finished = oldEvents.events.filter((e) => e.__typename === 'TurnFinished').at(-1)!;
    expect(finished.status).toBe('cancelled');
    oldEvents.stop();

    sessionId = String(rotated.newSessionId);
    const answered = await turnOf(client, sessionId, trigger!.messageId);
    // Compacted before the turn's model call: extract, compact, then the one answer in the new session.
    const kinds = model.chatRequests().map(callKind);
    expect(kinds.slice(-3)).toEqual(['extract', 'compact', 'main']);
    expect(kinds.filter((k) => k === 'compact')).toHaveLength(1);
    expect(model.chatRequests().filter((r) => callKind(r) === 'main' && lastUserText(r) === trigger!.text)).toHaveLength(1);
    expect(answered.find((e) => e.__typename === 'MessageAdded' && e.role === 'ASSISTANT')!.content).toBe(`Echo: ${trigger!.text}`);
    const newMessages = await messagesOf(client, sessionId);
    expect(newMessages[0]!.role).toBe('SYSTEM');
    expect(newMessages.slice(-2).map((m) => m.content)).toEqual([trigger!.text, `Echo: ${trigger!.text}`]);
    expect(newMessages.find((m) => m.id === trigger!.messageId)).toBeDefined();

    // The next message goes to the new session without another compaction.
    const more = await exchange(client, 'short follow-up');
    expect(more.sessionId).toBe(sessionId);
    expect(model.chatRequests().map(callKind).filter((k) => k === 'compact')).toHaveLength(1);
    await client.close();
  });

  it('a context_length_exceeded error leads to exactly one compaction and one retry, with a notice', async () => {
    const user = await createUserWithToken(t.client(t.ownerToken), 'Ivo', 'MEMBER');
    const client = t.client(user.token);
    const { sessionId } = await exchange(client, 'hello there');
    await exchange(client, 'tell me something');
    model.reset();
    model.enqueue(FakeReplies.contextLength(1024));
    const oldEvents = new EventCollector(client.wsClient(), sessionId);
    const sent = await send(client, 'and now a question');
    await oldEvents.waitFor((es) => !!rotationOf(es) && es.some((e) => e.__typename === 'TurnFinished' && e.status === 'cancelled'));
    const rotated = rotationOf(oldEvents.events)!;
    expect(rotated.reason).toBe('context-length');
    expect(oldEvents.events.filter((e) => e.__typename === 'Notice').map((n) => n.text)).toEqual([
      "🗜️ The conversation no longer fit the model's context window, so I compacted it into a new session and am retrying your message once.",
    ]);
    oldEvents.stop();
    const answered = await turnOf(client, String(rotated.newSessionId), sent.messageId!);
    expect(answered.find((e) => e.__typename === 'TurnFinished')!.status).toBe('done');
    expect(answered.find((e) => e.__typename === 'MessageAdded' && e.role === 'ASSISTANT')!.content).toBe('Echo: and now a question');
    const requests = model.chatRequests();
    expect(requests.map(callKind)).toEqual(['main', 'extract', 'compact', 'main']);
    expect(requests[0]!.status).toBe(400);
    expect(lastUserText(requests[3]!)).toBe('and now a question');
    await client.close();
  });

  it('when the retry fails with context_length_exceeded too, the user is told and nothing is compacted again', async () => {
    const user = await createUserWithToken(t.client(t.ownerToken), 'Jo', 'MEMBER');
    const client = t.client(user.token);
    const { sessionId } = await exchange(client, 'a first message');
    model.reset();
    const oldEvents = new EventCollector(client.wsClient(), sessionId);
    const sent = await send(client, 'this one is always too long');
    await oldEvents.waitFor((es) => !!rotationOf(es));
    const next = String(rotationOf(oldEvents.events)!.newSessionId);
    oldEvents.stop();
    const events = await turnOf(client, next, sent.messageId!);
    const finished = events.find((e) => e.__typename === 'TurnFinished')!;
    expect(finished.status).toBe('failed');
    expect(String(finished.error)).toMatch(/too long for the model/);
    expect(model.chatRequests().map(callKind)).toEqual(['main', 'extract', 'compact', 'main']);
    expect(await statusOf(client, next)).toBe('ACTIVE');
    await client.close();
  });

  it('on a platform chat the notice reaches the chat before the retried answer', async () => {
    const owner = t.client(t.ownerToken);
    const user = await createUserWithToken(owner, 'Quinn', 'MEMBER');
    dataOf(await owner.http(LinkIdentityDocument, { input: { userId: user.id, channel: 'telegram', handle: 'tg-quinn' } }));
    const say = (text: string, n: number) =>
      t.app.chat!.pipeline.handle({ channel: 'telegram', chatId: 'tg-quinn', chatKind: 'dm', sender: { handle: 'tg-quinn' }, text, platformMessageId: `q-${n}` });
    await say('hi from telegram', 1);
    await eventually(() => recorder.chunks.some((c) => c.chatId === 'tg-quinn' && c.text === 'Echo: hi from telegram'), 15_000, 'the first reply');
    model.enqueue(FakeReplies.contextLength(1024));
    await say('a question from telegram', 2);
    await eventually(() => recorder.chunks.some((c) => c.chatId === 'tg-quinn' && c.text === 'Echo: a question from telegram'), 20_000, 'the retried reply');
    expect(recorder.chunks.filter((c) => c.chatId === 'tg-quinn').map((c) => c.text)).toEqual([
      'Echo: hi from telegram',
      "🗜️ The conversation no longer fit the model's context window, so I compacted it into a new session and am retrying your message once.",
      'Echo: a question from telegram',
    ]);
    await owner.close();
  });
});
