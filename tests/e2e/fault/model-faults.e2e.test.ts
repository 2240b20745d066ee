/**
 * Fault suite: the model provider misbehaves in the ways provider-errors.e2e does not cover (429, 500,
 * unreachable and plain fallback are there): slow past `ai.providers.<name>.timeout_ms` (before the
 * headers and while streaming), accepting the connection and never answering (HTTP, and a bare TCP
 * socket), garbage (an HTML page, broken JSON, JSON of the wrong shape, event-stream lines without
 * `data:`), and a stream cut before `[DONE]` (ended cleanly, or reset). Every case: the user gets a
 * clear error reply (or, with a fallback, the fallback's answer), the session answers its next message,
 * no message is left QUEUED or PROCESSING, nothing crashes, and the log gets no error lines and no stack
 * per retry.
 */
import net from 'node:net';
import { In } from 'typeorm';
import { Message, MessageRole, MessageStatus } from '../../../server/modules/sessions';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { FakeOpenAIServer, type FakeChatReply } from '../../support/fakes/fake-openai-server';
import type { GraphQLTestClient } from '../../support/graphql-client';
import { startTestApp, type TestApp } from '../../support/test-app';
import { lastUserText } from '../pipeline/pipeline-helpers';
import { queuesIdle, reportFigures } from './fault-kit';

const TIMEOUT_MS = 1000;
const FULL_TEXT = 'This is the whole answer, which the model never finishes sending.';

interface Case {
  name: string;
  reply: FakeChatReply;
  /** What the user is told. */
  expect: RegExp;
  /** Text reached the user's screen before the fault: the call is neither retried nor handed to a fallback. */
  streamsText?: boolean;
}

const SLOW = /^⚠️ The model provider \(main\) did not answer in time\. Please try again in a moment\.$/;
const UNREADABLE = /^⚠️ The model provider \(main\) sent an answer that could not be read\. Please try again\.$/;
const UNREACHABLE = /^⚠️ The model provider \(main\) is unreachable right now\. Please try again in a moment\.$/;

const CASES: Case[] = [
  { name: 'slow-headers', reply: { text: 'too late', delayMs: TIMEOUT_MS * 3 }, expect: SLOW },
  { name: 'slow-stream', reply: { text: FULL_TEXT, chunks: 6, chunkDelayMs: 600 }, expect: SLOW, streamsText: true },
  { name: 'never-answers', reply: { hang: true }, expect: SLOW },
  { name: 'html-page', reply: { garbage: 'html' }, expect: UNREADABLE },
  { name: 'broken-json', reply: { garbage: 'not-json' }, expect: UNREADABLE },
  { name: 'wrong-shape', reply: { garbage: 'wrong-shape' }, expect: UNREADABLE },
  { name: 'invalid-sse', reply: { garbage: 'invalid-sse' }, expect: UNREADABLE },
  { name: 'cut-before-text', reply: { text: FULL_TEXT, chunks: 4, cut: { afterChunks: 0, how: 'end' } }, expect: UNREADABLE },
  { name: 'cut-clean', reply: { text: FULL_TEXT, chunks: 4, chunkDelayMs: 100, cut: { afterChunks: 2, how: 'end' } }, expect: UNREADABLE, streamsText: true },
  { name: 'cut-reset', reply: { text: FULL_TEXT, chunks: 4, chunkDelayMs: 100, cut: { afterChunks: 2, how: 'destroy' } }, expect: UNREACHABLE, streamsText: true },
];

/** Whether the model call is the turn's own (its last user message is the case's), not a background one. */
const isCaseCall = (req: Parameters<typeof lastUserText>[0], name: string) => lastUserText(req).startsWith(`[case ${name}]`);

/** The fault of the case named in the last user message (`[case <name>]`), else a normal answer. */
function responder(cases: Case[]) {
  return (req: Parameters<Parameters<FakeOpenAIServer['setDefault']>[0]>[0]): FakeChatReply => {
    const text = lastUserText(req);
    const fault = cases.find((c) => isCaseCall(req, c.name));
    return fault ? fault.reply : { text: `Echo: ${text}` };
  };
}

/** A TCP server that accepts connections and never reads or writes a byte. */
async function silentServer(): Promise<{ port: number; sockets: net.Socket[]; close(): Promise<void> }> {
  const sockets: net.Socket[] = [];
  const server = net.createServer((s) => void sockets.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    sockets,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function replyTo(t: TestApp, sessionId: string, messageId: string): Promise<Message> {
  return eventually(
    async () => {
      const rows = await t.app.db.repo(t.app.systemCtx('test'), Message).find({ where: { sessionId, role: MessageRole.ASSISTANT, replyToId: messageId } });
      return rows.length ? rows[0] : undefined;
    },
    30_000,
    `the reply to ${messageId}`,
  );
}

async function stuckMessages(t: TestApp): Promise<number> {
  return t.app.db.repo(t.app.systemCtx('test'), Message).count({ where: { status: In([MessageStatus.QUEUED, MessageStatus.PROCESSING]) } });
}

/** For one case: the faulty message's reply, and whether the session answered the next message normally. */
async function runCase(t: TestApp, client: GraphQLTestClient, c: Case): Promise<{ reply: Message; next: Message; replies: number }> {
  const first = await send(client, `[case ${c.name}] please answer`);
  const reply = await replyTo(t, first.sessionId, first.messageId!);
  const second = await send(client, `after ${c.name}`, first.sessionId);
  const next = await replyTo(t, first.sessionId, second.messageId!);
  const replies = await t.app.db.repo(t.app.systemCtx('test'), Message).count({ where: { sessionId: first.sessionId, role: MessageRole.ASSISTANT } });
  return { reply, next, replies };
}

/** Log lines at error level or above, and lines that carry a stack trace. */
function noise(t: TestApp): { errorLines: number; stackLines: number } {
  const entries = t.logs.entries();
  if (process.env.FAULT_TRACE) for (const e of entries.filter((x) => Number(x.level) >= 40)) console.log(JSON.stringify(e).slice(0, 600));
  return {
    errorLines: entries.filter((e) => Number(e.level) >= 50).length,
    stackLines: entries.filter((e) => JSON.stringify(e).includes('"stack"')).length,
  };
}

describe('fault: model provider misbehaving', () => {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => void rejections.push(reason);

  beforeAll(() => process.on('unhandledRejection', onRejection));
  afterAll(() => process.off('unhandledRejection', onRejection));

  describe('without a fallback', () => {
    let t: TestApp;
    let model: FakeOpenAIServer;
    const clients: GraphQLTestClient[] = [];

    beforeAll(async () => {
      model = await FakeOpenAIServer.start();
      model.setDefault(responder(CASES));
      t = await startTestApp({
        config: {
          ai: { providers: { main: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 16, timeout_ms: TIMEOUT_MS } }, max_retries: 1 },
          queues: { turn_concurrency: 16 },
          // No exchange summaries: their background model calls would meet the faults too.
          session: { summarizer_mode: 'manual' },
          log: { level: 'info' },
        },
      });
    });

    afterAll(async () => {
      for (const c of clients) await c.close();
      await t.close();
      await model.close();
    });

    it(`each fault gets a clear error reply and the session answers its next message (${CASES.length} cases at once)`, async () => {
      const owner = t.client(t.ownerToken);
      for (const c of CASES) clients.push(t.client((await createUserWithToken(owner, `user ${c.name}`, 'MEMBER')).token));
      await owner.close();
      const results = await Promise.all(CASES.map((c, i) => runCase(t, clients[i]!, c)));
      await queuesIdle(t);
      const stuck = await stuckMessages(t);
      const figures = noise(t);
      const calls = (name: string) => model.chatRequests().filter((r) => isCaseCall(r, name)).length;
      reportFigures('fault-suite', 'model-faults', {
        cases: CASES.length,
        clearErrorReplies: results.filter((r, i) => CASES[i]!.expect.test(r.reply.content)).length,
        nextAnswered: results.filter((r) => r.next.status === MessageStatus.DONE).length,
        modelCallsPerFault: Object.fromEntries(CASES.map((c) => [c.name, calls(c.name)])),
        stuck,
        unhandledRejections: rejections.length,
        ...figures,
      });
      for (const [i, c] of CASES.entries()) {
        const { reply, next, replies } = results[i]!;
        expect({ case: c.name, status: reply.status, content: reply.content }).toEqual({ case: c.name, status: MessageStatus.FAILED, content: expect.stringMatching(c.expect) });
        // Nothing of the broken answer reached the user.
        expect(reply.content).not.toContain('whole answer');
        expect({ case: c.name, status: next.status, content: next.content }).toEqual({ case: c.name, status: MessageStatus.DONE, content: `Echo: after ${c.name}` });
        expect({ case: c.name, replies }).toEqual({ case: c.name, replies: 2 });
        // ai.max_retries is 1: one call and one retry, no more; none once text was shown.
        expect({ case: c.name, calls: calls(c.name) }).toEqual({ case: c.name, calls: c.streamsText ? 1 : 2 });
      }
      expect(stuck).toBe(0);
      expect(rejections).toEqual([]);
      expect(figures).toEqual({ errorLines: 0, stackLines: 0 });
    }, 60_000);
  });

  describe('with a fallback provider', () => {
    let t: TestApp;
    let main: FakeOpenAIServer;
    let fallback: FakeOpenAIServer;
    let client: GraphQLTestClient;
    const FALLBACK_CASES = CASES.filter((c) => ['slow-headers', 'never-answers', 'broken-json', 'cut-before-text', 'cut-reset'].includes(c.name));

    beforeAll(async () => {
      main = await FakeOpenAIServer.start();
      main.setDefault(responder(FALLBACK_CASES));
      // The main provider answers everything else itself.
      fallback = await FakeOpenAIServer.start();
      fallback.setDefault((req) => ({ text: `Fallback: ${lastUserText(req)}` }));
      t = await startTestApp({
        config: {
          ai: {
            providers: {
              main: { base_url: main.baseUrl, model: 'fake-model', max_concurrency: 16, timeout_ms: TIMEOUT_MS },
              backup: { base_url: fallback.baseUrl, model: 'fake-model', max_concurrency: 16 },
            },
            roles: { main: { provider: 'main', fallbacks: [{ provider: 'backup' }] } },
            max_retries: 1,
          },
          queues: { turn_concurrency: 16 },
          // No exchange summaries: their background model calls would meet the faults too.
          session: { summarizer_mode: 'manual' },
          log: { level: 'info' },
        },
      });
      const owner = t.client(t.ownerToken);
      client = t.client((await createUserWithToken(owner, 'fallback user', 'MEMBER')).token);
      await owner.close();
    });

    afterAll(async () => {
      await client.close();
      await t.close();
      await main.close();
      await fallback.close();
    });

    it('a cut, garbled or too slow answer of the main provider is replaced by the fallback answer, unless text was already shown', async () => {
      const results = await Promise.all(
        FALLBACK_CASES.map(async (c) => {
          const sent = await send(client, `[case ${c.name}] please answer`);
          const reply = await replyTo(t, sent.sessionId, sent.messageId!);
          const next = await send(client, `after ${c.name}`, sent.sessionId);
          return { reply, next: await replyTo(t, sent.sessionId, next.messageId!) };
        }),
      );
      await queuesIdle(t);
      const stuck = await stuckMessages(t);
      reportFigures('fault-suite', 'model-faults-fallback', {
        cases: FALLBACK_CASES.length,
        fallbackAnswers: results.filter((r) => r.reply.content.startsWith('Fallback: ')).length,
        clearErrorReplies: results.filter((r) => r.reply.content.startsWith('⚠️')).length,
        stuck,
        unhandledRejections: rejections.length,
        ...noise(t),
      });
      for (const [i, c] of FALLBACK_CASES.entries()) {
        const { reply, next } = results[i]!;
        // Once text was shown the fallback may not take over (its answer would follow the cut one): a clear error.
        if (c.streamsText) expect({ case: c.name, status: reply.status, content: reply.content }).toEqual({ case: c.name, status: MessageStatus.FAILED, content: expect.stringMatching(c.expect) });
        else expect({ case: c.name, status: reply.status, content: reply.content }).toEqual({ case: c.name, status: MessageStatus.DONE, content: `Fallback: [case ${c.name}] please answer` });
        // The main provider answers the next message itself.
        expect({ case: c.name, status: next.status, content: next.content }).toEqual({ case: c.name, status: MessageStatus.DONE, content: `Echo: after ${c.name}` });
      }
      expect(stuck).toBe(0);
      expect(rejections).toEqual([]);
      expect(noise(t)).toEqual({ errorLines: 0, stackLines: 0 });
    }, 60_000);

    it('a main provider that accepts the TCP connection and never says a word: the fallback answers', async () => {
      const silent = await silentServer();
      const app = await startTestApp({
        config: {
          ai: {
            providers: {
              main: { base_url: `http://127.0.0.1:${silent.port}/v1`, model: 'silent-model', timeout_ms: TIMEOUT_MS, max_concurrency: 4 },
              backup: { base_url: fallback.baseUrl, model: 'fake-model', max_concurrency: 4 },
            },
            roles: { main: { provider: 'main', fallbacks: [{ provider: 'backup' }] } },
            max_retries: 1,
          },
          session: { summarizer_mode: 'manual' },
          log: { level: 'info' },
        },
      });
      try {
        const owner = app.client(app.ownerToken);
        const member = app.client((await createUserWithToken(owner, 'silent user', 'MEMBER')).token);
        await owner.close();
        const sent = await send(member, 'is anyone listening?');
        const reply = await replyTo(app, sent.sessionId, sent.messageId!);
        const next = await send(member, 'and now?', sent.sessionId);
        const nextReply = await replyTo(app, sent.sessionId, next.messageId!);
        await member.close();
        await queuesIdle(app);
        const stuck = await stuckMessages(app);
        reportFigures('fault-suite', 'model-silent-tcp', { connections: silent.sockets.length, reply: reply.content, stuck, ...noise(app) });
        expect(silent.sockets.length).toBeGreaterThanOrEqual(2);
        expect([reply.status, reply.content]).toEqual([MessageStatus.DONE, 'Fallback: is anyone listening?']);
        expect([nextReply.status, nextReply.content]).toEqual([MessageStatus.DONE, 'Fallback: and now?']);
        expect(stuck).toBe(0);
        expect(noise(app).errorLines).toBe(0);
      } finally {
        await app.close();
        await silent.close();
      }
    }, 60_000);
  });
});
