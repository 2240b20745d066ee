import { startTestApp, type TestApp } from '../../support/test-app';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { FakeClock } from '../../support/fakes/fake-clock';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { EventCollector } from '../../support/session-events';
import { MessagesDocument, SessionDocument } from '../../support/graphql/generated';
import { lastDailyReset, Message } from '../../../server/modules/sessions';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** Sends a message and waits until its turn finished; returns the session it went to and the Turn's reply. */
async function exchange(client: GraphQLTestClient, text: string): Promise<{ sessionId: string; reply: string | null }> {
  const sent = await send(client, text);
  const events = new EventCollector(client.wsClient(), sent.sessionId);
  await events.waitFor((es) => {
    const started = es.find((e) => e.__typename === 'TurnStarted' && (e.messageIds as string[]).includes(sent.messageId!));
    return !!started && es.some((e) => e.__typename === 'TurnFinished' && e.turnId === started.turnId);
  });
  events.stop();
  return { sessionId: sent.sessionId, reply: sent.reply };
}

async function statusOf(client: GraphQLTestClient, id: string): Promise<string> {
  return dataOf(await client.http(SessionDocument, { id })).session.status;
}

async function contentsOf(client: GraphQLTestClient, sessionId: string): Promise<string[]> {
  return dataOf(await client.http(MessagesDocument, { sessionId, first: 100 })).messages.edges.map((e) => e.node.content);
}

async function startApp(model: FakeOpenAIServer, clock: FakeClock, session: Record<string, unknown>): Promise<TestApp> {
  return startTestApp({
    clock,
    config: {
      ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 2 } } },
      session: { summarizer_mode: 'manual', ...session },
      log: { level: 'warn' },
    },
  });
}

/** Issue 5, acceptance 6: daily reset and idle expiry rotate with a notice; retention prunes. */
describe('session lifecycle', () => {
  let model: FakeOpenAIServer;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
  });
  afterAll(async () => {
    await model.close();
  });

  describe('daily reset (session.daily_reset_hour)', () => {
    let t: TestApp;
    const clock = new FakeClock();
    const HOUR = 4;

    beforeAll(async () => {
      t = await startApp(model, clock, { daily_reset_hour: HOUR });
    });
    afterAll(async () => {
      await t.close();
    });

    it('a message after the reset hour starts a new session, and the sender is told; before it, nothing changes', async () => {
      const user = await createUserWithToken(t.client(t.ownerToken), 'early bird', 'MEMBER');
      const client = t.client(user.token);
      const first = await exchange(client, 'good evening');
      const nextReset = new Date(lastDailyReset(clock.now(), HOUR).getTime() + DAY);

      clock.set(new Date(nextReset.getTime() - MINUTE));
      const before = await exchange(client, 'still here before the reset');
      expect(before.sessionId).toBe(first.sessionId);
      expect(before.reply).toBeNull();

      clock.set(new Date(nextReset.getTime() + MINUTE));
      const oldEvents = new EventCollector(client.wsClient(), first.sessionId);
      const after = await exchange(client, 'good morning');
      expect(after.sessionId).not.toBe(first.sessionId);
      expect(after.reply).toMatch(/new session started.*reset daily at 04:00/i);
      await oldEvents.waitFor((es) => es.some((e) => e.__typename === 'SessionRotated'));
      const rotated = oldEvents.events.find((e) => e.__typename === 'SessionRotated')!;
      expect(rotated).toMatchObject({ previousSessionId: first.sessionId, newSessionId: after.sessionId, reason: 'daily-reset' });
      oldEvents.stop();

      // The notice reached the web client once (as the reply above); the old session is archived and still readable.
      expect(await statusOf(client, first.sessionId)).toBe('ARCHIVED');
      expect(await statusOf(client, after.sessionId)).toBe('ACTIVE');
      expect(await contentsOf(client, first.sessionId)).toEqual(['good evening', 'Echo: good evening', 'still here before the reset', 'Echo: still here before the reset']);
      expect(await contentsOf(client, after.sessionId)).toEqual(['good morning', 'Echo: good morning']);

      // The new session is not reset again on the same day.
      const again = await exchange(client, 'and again');
      expect(again.sessionId).toBe(after.sessionId);
      expect(again.reply).toBeNull();
      await client.close();
    });
  });

  describe('idle expiry (session.idle_minutes)', () => {
    let t: TestApp;
    const clock = new FakeClock();

    beforeAll(async () => {
      t = await startApp(model, clock, { idle_minutes: 30 });
    });
    afterAll(async () => {
      await t.close();
    });

    it('rotates a session idle for longer than idle_minutes, with a notice; activity keeps it alive', async () => {
      const user = await createUserWithToken(t.client(t.ownerToken), 'sleepy', 'MEMBER');
      const client = t.client(user.token);
      const first = await exchange(client, 'hello');
      clock.advance(20 * MINUTE);
      expect((await exchange(client, 'twenty minutes later')).sessionId).toBe(first.sessionId);
      clock.advance(20 * MINUTE);
      expect((await exchange(client, 'another twenty minutes')).sessionId).toBe(first.sessionId);

      clock.advance(31 * MINUTE);
      const oldEvents = new EventCollector(client.wsClient(), first.sessionId);
      const after = await exchange(client, 'back after a break');
      expect(after.sessionId).not.toBe(first.sessionId);
      expect(after.reply).toMatch(/new session started.*idle for over 30 minutes/i);
      await oldEvents.waitFor((es) => es.some((e) => e.__typename === 'SessionRotated'));
      expect(oldEvents.events.find((e) => e.__typename === 'SessionRotated')).toMatchObject({ newSessionId: after.sessionId, reason: 'idle' });
      oldEvents.stop();
      expect(await statusOf(client, first.sessionId)).toBe('ARCHIVED');
      // The model saw only the new session's history.
      const prompt = JSON.stringify(model.lastChatRequest()!.body!.messages);
      expect(prompt).toContain('back after a break');
      expect(prompt).not.toContain('another twenty minutes');
      await client.close();
    });

    it('slash commands on a stale session also start the new session first', async () => {
      const user = await createUserWithToken(t.client(t.ownerToken), 'commander', 'MEMBER');
      const client = t.client(user.token);
      const first = await exchange(client, 'hi');
      clock.advance(45 * MINUTE);
      const whoami = await send(client, '/whoami');
      expect(whoami.sessionId).not.toBe(first.sessionId);
      expect(whoami.reply).toMatch(/new session started/i);
      expect(whoami.reply).toContain('Trust: MEMBER');
      await client.close();
    });
  });

  describe('retention (session.retention_days) on the maintenance queue', () => {
    let t: TestApp;
    const clock = new FakeClock();

    beforeAll(async () => {
      t = await startApp(model, clock, { retention_days: 30 });
    });
    afterAll(async () => {
      await t.close();
    });

    it('prunes archived sessions untouched for retention_days with their messages; active and recent ones stay', async () => {
      const user = await createUserWithToken(t.client(t.ownerToken), 'archivist', 'MEMBER');
      const client = t.client(user.token);
      const old = await exchange(client, 'an old conversation');
      const rotated = await send(client, '/new');
      expect(rotated.reply).toMatch(/new session/i);
      clock.advance(20 * DAY);
      const middle = await exchange(client, 'a newer conversation');
      expect(middle.sessionId).not.toBe(old.sessionId);
      await send(client, '/new');
      const current = await exchange(client, 'the current conversation');

      clock.advance(11 * DAY);
      await t.app.chat!.maintenance.runNow();
      await eventually(async () => {
        const res = await client.http(SessionDocument, { id: old.sessionId });
        return res.errors?.[0]?.extensions?.code === 'NOT_FOUND';
      }, 10_000, 'the old archived session to be pruned');
      expect(await t.app.db.repo(t.app.systemCtx('test'), Message).countBy({ sessionId: old.sessionId })).toBe(0);
      // Archived 11 days ago: kept. Active: kept, however old it gets.
      expect(await statusOf(client, middle.sessionId)).toBe('ARCHIVED');
      expect(await contentsOf(client, middle.sessionId)).toEqual(['a newer conversation', 'Echo: a newer conversation']);
      expect(await statusOf(client, current.sessionId)).toBe('ACTIVE');

      clock.advance(60 * DAY);
      await t.app.chat!.maintenance.runNow();
      await eventually(async () => (await client.http(SessionDocument, { id: middle.sessionId })).errors?.[0]?.extensions?.code === 'NOT_FOUND', 10_000, 'the second archived session to be pruned');
      expect(await statusOf(client, current.sessionId)).toBe('ACTIVE');
      await client.close();
    });
  });
});
