import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { eventually, send } from '../../support/chat-helpers';
import type { GraphQLTestClient } from '../../support/graphql-client';
import { EventCollector } from '../../support/session-events';
import { Message, MessageRole, Session, SessionStatus } from '../../../server/modules/sessions';

function userTexts(req: RecordedRequest): string[] {
  const messages = (req.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  return messages.filter((m) => m.role === 'user').map((m) => String(m.content));
}

/**
 * Session rotation (DESIGN §4) through the one SessionRotation service: messages waiting when `/new`
 * comes belong to the new session; `/compact` while a turn runs waits for the turn instead of failing;
 * a slash command's answer reaches a web client once.
 */
describe('session rotation', () => {
  let model: FakeOpenAIServer;
  let t: TestApp;
  let owner: GraphQLTestClient;
  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 2 } } },
        session: { summarizer_mode: 'manual' },
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

  const repo = () => t.app.db.repo(t.app.systemCtx('test'), Message);

  it('/new while messages wait: they are answered in the new session, without the old history', async () => {
    model.enqueue({ hang: true }, { text: 'answer two' }, { text: 'answer three' });
    const first = await send(owner, 'one');
    await model.waitForRequests(1);
    const before = model.chatRequests().length;
    await send(owner, 'two');
    await send(owner, 'three');
    const rotated = await send(owner, '/new');
    expect(rotated.reply).toContain('new session');
    expect(rotated.sessionId).not.toBe(first.sessionId);
    const replies = await eventually(async () => {
      const rows = await repo().find({ where: { sessionId: rotated.sessionId, role: MessageRole.ASSISTANT }, order: { id: 'ASC' } });
      return rows.length === 2 ? rows : undefined;
    }, 15_000, 'two replies in the new session');
    expect(replies.map((r) => r.content)).toEqual(['answer two', 'answer three']);
    const moved = await repo().find({ where: { sessionId: rotated.sessionId, role: MessageRole.USER }, order: { id: 'ASC' } });
    expect(moved.map((m) => m.content)).toEqual(['two', 'three']);
    const old = await repo().find({ where: { sessionId: first.sessionId } });
    expect(old.map((m) => m.content)).toEqual(['one']);
    const later = model.chatRequests().slice(before);
    expect(later.map(userTexts)).toEqual([['two'], ['two', 'three']]);
  });

  it('/compact while a turn runs is queued and runs right after the turn', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    model.enqueue({ text: 'first answer' });
    const session = (await send(owner, '/new')).sessionId;
    await send(owner, 'hello there', session);
    await eventually(async () => (await repo().countBy({ sessionId: session, role: MessageRole.ASSISTANT })) === 1, 10_000, 'first answer');
    model.enqueue(async () => {
      await held;
      return { text: 'slow answer' };
    });
    await send(owner, 'a slow question', session);
    await eventually(() => t.app.chat!.turnControl.isRunning(session), 10_000, 'a running turn');
    const events = new EventCollector(owner.wsClient(), session, 0);
    const asked = await send(owner, '/compact keep it short', session);
    expect(asked.reply).toContain('as soon as it has finished');
    expect((await t.app.db.repo(t.app.systemCtx('test'), Session).findOneByOrFail({ id: session })).status).toBe(SessionStatus.ACTIVE);
    release();
    await events.waitFor((es) => es.some((e) => e.__typename === 'SessionRotated'), 20_000);
    const rotatedEvent = events.events.find((e) => e.__typename === 'SessionRotated')!;
    expect(rotatedEvent.reason).toBe('compact');
    const finished = events.events.findIndex((e) => e.__typename === 'TurnFinished' && e.status === 'done');
    expect(finished).toBeGreaterThanOrEqual(0);
    expect(finished).toBeLessThan(events.events.indexOf(rotatedEvent));
    expect(events.events.some((e) => e.__typename === 'Notice' && String(e.text).includes('compacted as you asked'))).toBe(true);
    const next = String(rotatedEvent.newSessionId);
    const seeded = await repo().find({ where: { sessionId: next }, order: { id: 'ASC' } });
    expect(seeded[0]!.role).toBe(MessageRole.SYSTEM);
    expect(seeded[0]!.content).toContain('Summary of the conversation so far');
    events.stop();
  });

  it('a slash command answers a web client once: in the reply of sendMessage, not again as a Notice', async () => {
    const status = await send(owner, '/status');
    expect(status.reply).toContain('Model:');
    model.enqueue({ text: 'after status' });
    const events = new EventCollector(owner.wsClient(), status.sessionId, 0);
    const sent = await send(owner, 'ping', status.sessionId);
    await events.waitFor((es) => es.some((e) => e.__typename === 'TurnFinished' && (e.status as string) === 'done' && events.events.some((s) => s.__typename === 'TurnStarted' && (s.messageIds as string[]).includes(sent.messageId!))));
    expect(events.events.filter((e) => e.__typename === 'Notice' && String(e.text).includes('Model:'))).toEqual([]);
    events.stop();
  });
});
