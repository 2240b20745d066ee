import net from 'node:net';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, FakeReplies } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, send } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { EventCollector, type EventRecord } from '../../support/session-events';
import { Message, MessageRole, MessageStatus } from '../../../server/modules/sessions';
import { lastUserText } from './pipeline-helpers';

const USAGE = /* GraphQL */ `
  query Usage($from: DateTimeISO!, $to: DateTimeISO!) { usage(from: $from, to: $to, groupBy: MODEL) { key calls } }
`;

/** A port nothing listens on (taken and released at once). */
function unusedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const finished = (es: EventRecord[]) => es.filter((e) => e.__typename === 'TurnFinished');
const assistantAdded = (es: EventRecord[]) => es.filter((e) => e.__typename === 'MessageAdded' && e.role === 'ASSISTANT');

/** A member's web session with a subscription on it (opened by a slash command, which needs no model). */
async function openSession(t: TestApp, name: string): Promise<{ client: GraphQLTestClient; sessionId: string; events: EventCollector }> {
  const user = await createUserWithToken(t.client(t.ownerToken), name, 'MEMBER');
  const client = t.client(user.token);
  const { sessionId } = await send(client, '/whoami');
  return { client, sessionId, events: new EventCollector(client.wsClient(), sessionId) };
}

async function repliesOf(t: TestApp, sessionId: string): Promise<Message[]> {
  return t.app.db.repo(t.app.systemCtx('test'), Message).find({ where: { sessionId, role: MessageRole.ASSISTANT }, order: { id: 'ASC' } });
}

/** Issue 3, acceptance 7: 429 and 5xx are retried, an unreachable provider gives a clear reply, fallbacks are used. */
describe('provider errors', () => {
  describe('a provider that answers with errors', () => {
    let t: TestApp;
    let model: FakeOpenAIServer;

    beforeAll(async () => {
      model = await FakeOpenAIServer.start();
      t = await startTestApp({ config: { ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 1 } } }, log: { level: 'warn' } } });
    });
    afterAll(async () => {
      await t.close();
      await model.close();
    });
    beforeEach(() => model.reset());

    it('429 with Retry-After: 1 waits at least a second, then the reply comes once', async () => {
      const { client, sessionId, events } = await openSession(t, 'rate limited');
      model.enqueue(FakeReplies.rateLimited(1), FakeReplies.text('answer after the rate limit', { chunks: 4 }));
      await send(client, 'are you there?');
      await events.waitFor((es) => finished(es).length === 1, 15_000);

      const [limited, answered] = model.chatRequests();
      expect(model.chatRequests()).toHaveLength(2);
      expect(limited!.status).toBe(429);
      expect(answered!.status).toBe(200);
      expect(answered!.startedAt - limited!.endedAt!).toBeGreaterThanOrEqual(1000);

      expect(finished(events.events).map((e) => e.status)).toEqual(['done']);
      expect(assistantAdded(events.events).map((e) => e.content)).toEqual(['answer after the rate limit']);
      expect(events.events.filter((e) => e.__typename === 'ReplyDelta').map((e) => e.text).join('')).toBe('answer after the rate limit');
      const replies = await repliesOf(t, sessionId);
      expect(replies.map((r) => [r.content, r.status])).toEqual([['answer after the rate limit', MessageStatus.DONE]]);
      events.stop();
      await client.close();
    });

    it('a provider that keeps answering 429 is retried ai.max_retries times, then the user is told', async () => {
      const { client, sessionId, events } = await openSession(t, 'always limited');
      const limited = { error: { status: 429, message: 'Rate limit reached.', code: 'rate_limit_exceeded', retryAfterMs: 100 } };
      model.setDefault(() => limited);
      try {
        await send(client, 'still there?');
        await events.waitFor((es) => finished(es).length === 1, 15_000);
      } finally {
        model.setDefault((req) => ({ text: `Echo: ${lastUserText(req)}` }));
      }
      // One call and max_retries (3) retries, each after the provider's retry-after-ms.
      const requests = model.chatRequests();
      expect(requests.map((r) => r.status)).toEqual([429, 429, 429, 429]);
      for (let i = 1; i < requests.length; i++) expect(requests[i]!.startedAt - requests[i - 1]!.endedAt!).toBeGreaterThanOrEqual(100);
      expect(finished(events.events)).toMatchObject([{ status: 'failed', error: expect.stringContaining('rate-limiting') }]);
      expect((await repliesOf(t, sessionId)).map((r) => r.status)).toEqual([MessageStatus.FAILED]);
      events.stop();
      await client.close();
    });

    it('a 500 is retried after back-off and the reply comes once', async () => {
      const { client, sessionId, events } = await openSession(t, 'server error');
      model.enqueue(FakeReplies.serverError(500), FakeReplies.text('answer after the retry'));
      await send(client, 'hello?');
      await events.waitFor((es) => finished(es).length === 1, 15_000);

      const [failed, answered] = model.chatRequests();
      expect(model.chatRequests()).toHaveLength(2);
      expect(failed!.status).toBe(500);
      expect(answered!.status).toBe(200);
      // The queue's back-off (500 ms for the first retry).
      expect(answered!.startedAt - failed!.endedAt!).toBeGreaterThanOrEqual(500);
      expect(finished(events.events).map((e) => e.status)).toEqual(['done']);
      expect(assistantAdded(events.events).map((e) => e.content)).toEqual(['answer after the retry']);
      expect((await repliesOf(t, sessionId)).map((r) => r.content)).toEqual(['answer after the retry']);
      events.stop();
      await client.close();
    });
  });

  describe('an unreachable provider without a fallback', () => {
    let t: TestApp;
    let port: number;
    let model: FakeOpenAIServer | null = null;

    beforeAll(async () => {
      port = await unusedPort();
      t = await startTestApp({
        config: { ai: { providers: { down: { base_url: `http://127.0.0.1:${port}/v1`, model: 'down-model' } }, max_retries: 1 }, log: { level: 'warn' } },
      });
    });
    afterAll(async () => {
      await t.close();
      await model?.close();
    });

    it('gives the user a clear error reply, and the next message works once the provider is back', async () => {
      const { client, sessionId, events } = await openSession(t, 'unlucky');
      const sent = await send(client, 'first try');
      await events.waitFor((es) => finished(es).length === 1, 20_000);

      const [failure] = finished(events.events);
      expect(failure).toMatchObject({ status: 'failed', error: expect.stringMatching(/^⚠️ The model provider \(down\) is unreachable/) });
      const [reply] = await repliesOf(t, sessionId);
      expect(reply).toMatchObject({ status: MessageStatus.FAILED, replyToId: sent.messageId });
      expect(reply!.content).toBe(failure!.error);
      expect(assistantAdded(events.events).map((e) => e.content)).toEqual([reply!.content]);
      // No internals: neither the address nor the error class reaches the user.
      expect(reply!.content).not.toContain(String(port));
      expect(reply!.content).not.toMatch(/ECONNREFUSED|Error:/);

      model = await FakeOpenAIServer.start({ port });
      await send(client, 'second try');
      await events.waitFor((es) => finished(es).length === 2, 15_000);
      expect(finished(events.events).map((e) => e.status)).toEqual(['failed', 'done']);
      const replies = await repliesOf(t, sessionId);
      expect(replies.map((r) => [r.content.startsWith('⚠️'), r.status])).toEqual([
        [true, MessageStatus.FAILED],
        [false, MessageStatus.DONE],
      ]);
      expect(replies[1]!.content).toBe('Echo: second try');
      events.stop();
      await client.close();
    });
  });

  describe('a fallback provider', () => {
    let t: TestApp;
    let good: FakeOpenAIServer;

    beforeAll(async () => {
      good = await FakeOpenAIServer.start();
      const port = await unusedPort();
      t = await startTestApp({
        config: {
          ai: {
            providers: {
              broken: { base_url: `http://127.0.0.1:${port}/v1`, model: 'broken-model' },
              good: { base_url: good.baseUrl, model: 'fake-model' },
            },
            roles: { main: { provider: 'broken', fallbacks: [{ provider: 'good' }] } },
            max_retries: 1,
          },
          log: { level: 'warn' },
        },
      });
    });
    afterAll(async () => {
      await t.close();
      await good.close();
    });

    it('answers from the fallback when the main provider is unreachable', async () => {
      const from = new Date(Date.now() - 1000);
      const { client, sessionId, events } = await openSession(t, 'fallback user');
      await send(client, 'anyone home?');
      await events.waitFor((es) => finished(es).length === 1, 20_000);

      expect(finished(events.events).map((e) => e.status)).toEqual(['done']);
      expect((await repliesOf(t, sessionId)).map((r) => [r.content, r.status])).toEqual([['Echo: anyone home?', MessageStatus.DONE]]);
      expect(good.chatRequests()).toHaveLength(1);
      expect(good.chatRequests()[0]!.body?.model).toBe('fake-model');
      expect(t.logs.text).toContain('trying the fallback');
      // Usage is recorded against the provider that answered.
      const usage = dataOf(await client.http<{ usage: Array<{ key: string; calls: number }> }, unknown>(USAGE, { from, to: new Date(Date.now() + 60_000) })).usage;
      expect(usage).toEqual([{ key: 'good/fake-model', calls: 1 }]);
      events.stop();
      await client.close();
    });
  });
});
