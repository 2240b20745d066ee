import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { eventually, send } from '../../support/chat-helpers';
import { EventCollector } from '../../support/session-events';
import { Message, MessageRole, MessageStatus } from '../../../server/modules/sessions';

function userTexts(body: unknown): string[] {
  const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  return messages.filter((m) => m.role === 'user').map((m) => String(m.content));
}

async function appWith(queueMode: string, model: FakeOpenAIServer): Promise<TestApp> {
  return startTestApp({
    config: {
      ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 2 } } },
      session: { queue_mode: queueMode },
    },
  });
}

describe('session.queue_mode', () => {
  let model: FakeOpenAIServer;
  beforeEach(async () => {
    model = await FakeOpenAIServer.start();
  });
  afterEach(async () => {
    await model.close();
  });

  it('collect: messages that arrive during a turn are answered together in the next turn', async () => {
    const t = await appWith('collect', model);
    try {
      const owner = t.client(t.ownerToken);
      model.enqueue({ text: 'first answer', delayMs: 600 } as never);
      model.enqueue({ text: 'batched answer' } as never);
      const first = await send(owner, 'one');
      await model.waitForRequests(1);
      await send(owner, 'two');
      await send(owner, 'three');
      await send(owner, 'four');
      const repo = t.app.db.repo(t.app.systemCtx('test'), Message);
      await eventually(async () => (await repo.countBy({ sessionId: first.sessionId, role: MessageRole.ASSISTANT })) === 2, 15_000, 'two replies');
      // A fence: the session's turns run in order, so a turn answering two/three/four separately would come before this one's.
      await send(owner, 'five');
      await eventually(async () => (await repo.countBy({ sessionId: first.sessionId, role: MessageRole.ASSISTANT })) === 3, 15_000, 'the fence reply');
      const requests = model.chatRequests();
      expect(requests).toHaveLength(3);
      expect(userTexts(requests[1]!.body).slice(-3)).toEqual(['two', 'three', 'four']);
      expect(userTexts(requests[2]!.body).at(-1)).toBe('five');
      const inbound = await repo.find({ where: { sessionId: first.sessionId, role: MessageRole.USER }, order: { id: 'ASC' } });
      expect(inbound.map((m) => m.status)).toEqual(['DONE', 'DONE', 'DONE', 'DONE', 'DONE']);
      expect(new Set(inbound.slice(1, 4).map((m) => m.turnId)).size).toBe(1);
      await owner.close();
    } finally {
      await t.close();
    }
  });

  it('interrupt: a new message aborts the running turn; the older message is kept in the history', async () => {
    const t = await appWith('interrupt', model);
    try {
      const owner = t.client(t.ownerToken);
      model.enqueue({ hang: true } as never);
      model.enqueue({ text: 'answer to the second' } as never);
      const first = await send(owner, 'long question');
      const events = new EventCollector(owner.wsClient(), first.sessionId);
      await model.waitForRequests(1);
      await send(owner, 'never mind, this instead');
      await events.waitFor((es) => es.filter((e) => e.__typename === 'TurnFinished').length >= 2);
      const finished = events.events.filter((e) => e.__typename === 'TurnFinished').map((e) => e.status);
      expect(finished).toEqual(['cancelled', 'done']);
      const repo = t.app.db.repo(t.app.systemCtx('test'), Message);
      const inbound = await repo.find({ where: { sessionId: first.sessionId, role: MessageRole.USER }, order: { id: 'ASC' } });
      expect(inbound.map((m) => m.status)).toEqual([MessageStatus.CANCELLED, MessageStatus.DONE]);
      const second = model.chatRequests()[1]!;
      expect(userTexts(second.body)).toEqual(['long question', 'never mind, this instead']);
      // The aborted model call was really cut off.
      expect(model.chatRequests()[0]!.aborted).toBe(true);
      events.stop();
      await owner.close();
    } finally {
      await t.close();
    }
  });

  it('followup (default): /stop aborts the running turn and the next message is answered', async () => {
    const t = await appWith('followup', model);
    try {
      const owner = t.client(t.ownerToken);
      model.enqueue({ hang: true } as never);
      const first = await send(owner, 'please hang');
      const events = new EventCollector(owner.wsClient(), first.sessionId);
      await model.waitForRequests(1);
      const stop = await send(owner, '/stop');
      expect(stop.reply).toBe('Stopping the running turn.');
      await events.waitFor((es) => es.some((e) => e.__typename === 'TurnFinished' && e.status === 'cancelled'));
      await send(owner, 'hello again');
      await events.waitFor((es) => es.some((e) => e.__typename === 'TurnFinished' && e.status === 'done'));
      const reply = events.events.find((e) => e.__typename === 'MessageAdded' && e.role === 'ASSISTANT');
      expect(reply?.content).toBe('Echo: hello again');
      events.stop();
      await owner.close();
    } finally {
      await t.close();
    }
  });
});
