import { In } from 'typeorm';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { Message, MessageRole, Session, SessionStatus } from '../../../server/modules/sessions';

/**
 * A new user's first messages sent all at once land in one session (found on PostgreSQL, where
 * concurrent requests used to create an active session each and split the conversation).
 */
describe('first messages of a chat sent at once', () => {
  let model: FakeOpenAIServer;
  let t: TestApp;
  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } } },
        session: { summarizer_mode: 'manual' },
        log: { level: 'warn' },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  it('share one active session per user, and every message is answered there', async () => {
    const owner = t.client(t.ownerToken);
    const users = await Promise.all(Array.from({ length: 4 }, (_, u) => createUserWithToken(owner, `racer ${u}`, 'MEMBER')));
    const clients = users.map((u) => t.client(u.token));
    const turns = await Promise.all(clients.flatMap((c, u) => Array.from({ length: 6 }, (_, m) => send(c, `u${u}-m${m}`).then((turn) => ({ u, turn })))));
    for (let u = 0; u < users.length; u++) {
      const mine = new Set(turns.filter((x) => x.u === u).map((x) => x.turn.sessionId));
      expect(mine.size).toBe(1);
    }
    const ctx = t.app.systemCtx('test');
    const active = await t.app.db.repo(ctx, Session).findBy({ userId: In(users.map((u) => u.id)), status: SessionStatus.ACTIVE });
    expect(active).toHaveLength(users.length);
    const sessionIds = active.map((s) => s.id);
    await eventually(async () => (await t.app.db.repo(ctx, Message).countBy({ sessionId: In(sessionIds), role: MessageRole.ASSISTANT })) === turns.length, 30_000, 'every message answered');
    await Promise.all(clients.map((c) => c.close()));
    await owner.close();
  });
});
