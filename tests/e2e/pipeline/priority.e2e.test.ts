import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import type { CallPriority, ModelCallInput } from '../../../server/modules/models';
import { Message, MessageRole } from '../../../server/modules/sessions';
import { lastUserText, preciseNow } from './pipeline-helpers';

const HOLD_MS = 150;
const GRACE_MS = 400;

/**
 * Issue 3, acceptance 4: with `max_concurrency: 1`, queued heartbeat and summarizer calls wait for the
 * interactive ones, heartbeat goes before summarizer, and background calls wait `ai.background_grace_ms`
 * after the last interactive call ended. Everything is read from the fake model's request timestamps.
 */
describe('model-calls priorities (max_concurrency 1)', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    model.setDefault((req) => ({ text: `Echo: ${lastUserText(req)}`, delayMs: HOLD_MS }));
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 1 } }, background_grace_ms: GRACE_MS },
        // The summarizer calls of this test are its own; automatic exchange summaries would add more.
        session: { summarizer_mode: 'manual' },
        log: { level: 'warn' },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  it('runs interactive calls first, then heartbeat, then summarizer, one at a time, after the grace', async () => {
    const queue = t.app.chat!.models;
    const ctx = t.app.systemCtx('priority-test');
    // When each call was handed to the queue (the agent's calls too), to know when an interactive call was waiting.
    const enqueuedAt = new Map<string, number>();
    const original = queue.call.bind(queue);
    queue.call = (c, input: ModelCallInput, signal) => {
      const last = [...input.messages].reverse().find((m) => m.role === 'user');
      enqueuedAt.set(String(last?.content), preciseNow());
      return original(c, input, signal);
    };
    const direct = (priority: CallPriority, text: string) =>
      queue.call(ctx, { role: priority === 'interactive' ? 'main' : priority, priority, messages: [{ role: 'user', content: text }] });

    try {
      const owner = t.client(t.ownerToken);
      const users = await Promise.all([1, 2, 3].map((i) => createUserWithToken(owner, `member ${i}`, 'MEMBER')));
      const clients = users.map((u) => t.client(u.token));

      // An interactive turn holds the only slot (longer than the others, so everything below queues behind it) …
      model.enqueue({ text: 'Echo: interactive 1', delayMs: 3 * HOLD_MS });
      const first = await send(clients[0]!, 'interactive 1');
      await model.waitForRequests(1);
      // … while background calls queue up (summarizer first, so FIFO order alone would be wrong) …
      const background: Array<Promise<unknown>> = [];
      for (const i of [1, 2, 3]) {
        background.push(direct('summarizer', `summarizer ${i}`));
        background.push(direct('heartbeat', `heartbeat ${i}`));
      }
      // … and two more interactive turns arrive.
      const turns = [first, await send(clients[1]!, 'interactive 2'), await send(clients[2]!, 'interactive 3')];

      // Inside the grace window after the last of them, one more interactive call arrives.
      const interactiveEnded = await eventually(() => {
        const done = model.chatRequests().filter((r) => lastUserText(r).startsWith('interactive') && r.endedAt !== null);
        return done.length === 3 ? done : undefined;
      }, 10_000, 'three interactive calls');
      const lastEnd = Math.max(...interactiveEnded.map((r) => r.endedAt!));
      await new Promise((r) => setTimeout(r, Math.max(0, lastEnd + 100 - preciseNow())));
      const late = direct('interactive', 'interactive 4');

      await Promise.all([...background, late]);
      const repo = t.app.db.repo(ctx, Message);
      for (const turn of turns) {
        await eventually(async () => (await repo.countBy({ sessionId: turn.sessionId, role: MessageRole.ASSISTANT })) === 1, 10_000, 'turn reply');
      }

      const requests = [...model.chatRequests()].sort((a, b) => a.startedAt - b.startedAt);
      const kindOf = (r: RecordedRequest) => lastUserText(r).split(' ')[0]!;
      expect(requests).toHaveLength(10);
      expect(requests.every((r) => r.status === 200 && r.endedAt !== null)).toBe(true);

      // Preconditions that make the scenario meaningful.
      const i1 = requests.find((r) => lastUserText(r) === 'interactive 1')!;
      for (const text of ['summarizer 1', 'heartbeat 3', 'interactive 2', 'interactive 3']) expect(enqueuedAt.get(text)!).toBeLessThan(i1.endedAt!);
      expect(enqueuedAt.get('interactive 4')!).toBeLessThan(lastEnd + GRACE_MS);

      // At most one request at a time.
      for (let i = 1; i < requests.length; i++) expect(requests[i]!.startedAt).toBeGreaterThanOrEqual(requests[i - 1]!.endedAt!);

      // Interactive, then heartbeat, then summarizer.
      expect(requests.map(kindOf)).toEqual([...Array(4).fill('interactive'), ...Array(3).fill('heartbeat'), ...Array(3).fill('summarizer')]);

      // No background call started while an interactive call was waiting.
      const interactive = requests.filter((r) => kindOf(r) === 'interactive');
      const backgroundRequests = requests.filter((r) => kindOf(r) !== 'interactive');
      for (const b of backgroundRequests) {
        for (const i of interactive) {
          const waitingSince = enqueuedAt.get(lastUserText(i))!;
          expect(b.startedAt > waitingSince && b.startedAt < i.startedAt).toBe(false);
        }
      }

      // Background calls waited the grace after the last interactive call ended (the late one restarted it).
      const lastInteractiveEnd = Math.max(...interactive.map((r) => r.endedAt!));
      expect(interactive.at(-1)!.endedAt).toBe(lastInteractiveEnd);
      expect(backgroundRequests[0]!.startedAt - lastInteractiveEnd).toBeGreaterThanOrEqual(GRACE_MS);
      await Promise.all(clients.map((c) => c.close()));
      await owner.close();
    } finally {
      queue.call = original;
    }
  });
});
