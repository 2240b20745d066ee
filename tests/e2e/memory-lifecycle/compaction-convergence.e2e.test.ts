import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, send } from '../../support/chat-helpers';
import { callKind, callsOf, FIVE_SECTION_SUMMARY, scriptModel, turnOf, words } from './summarizer-model';



function nonSystem(req: RecordedRequest) {
  return (req.body?.messages ?? []).filter((m) => m.role !== 'system');
}

/**
 * Issue 14: with a small context window and long turns, compaction used to fire on nearly every message
 * (the new session was seeded with more than the threshold). A compacted session must start well under it.
 */
describe('compaction converges with a small window and long turns', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    scriptModel(model);
    t = await startTestApp({
      config: {
        // Small, with room for the MEMBER tools' schemas, which count against the prompt since MCP came.
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 2560, max_concurrency: 2 } } },
        session: { summarizer_mode: 'manual', compact_threshold: 0.8, compact_keep_turns: 3 },
        log: { level: 'warn' },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  it('never compacts on two messages in a row, every notice is under 100 % of the window, and the prompt after a compaction holds the summary and starts history with a user message', async () => {
    const user = await createUserWithToken(t.client(t.ownerToken), 'Iris', 'MEMBER');
    const client = t.client(user.token);
    let sessionId: string | null = null;
    const triggered: number[] = [];
    const notices: string[] = [];
    const total = 14;
    for (let i = 0; i < total; i++) {
      const sent = await send(client, `long ${i}: ${words(50, `t${i}q`)}`);
      sessionId ??= sent.sessionId;
      expect(sent.sessionId).toBe(sessionId);
      const events = await turnOf(client, sessionId, sent.messageId!);
      const rotated = events.find((e) => e.__typename === 'SessionRotated');
      notices.push(...events.filter((e) => e.__typename === 'Notice' && String(e.text).startsWith('🗜️')).map((e) => String(e.text)));
      if (rotated) {
        triggered.push(i);
        sessionId = String(rotated.newSessionId);
        await turnOf(client, sessionId, sent.messageId!);
      }
    }
    await client.close();

    expect(triggered.length).toBeGreaterThanOrEqual(1);
    for (let k = 1; k < triggered.length; k++) expect(triggered[k]! - triggered[k - 1]!).toBeGreaterThanOrEqual(2);
    expect(callsOf(model, 'compact')).toHaveLength(triggered.length);
    const shares = notices.map((n) => Number(/about (\d+)%/.exec(n)?.[1]));
    expect(shares).toHaveLength(triggered.length);
    for (const s of shares) expect(s).toBeLessThan(100);

    // Each main call right after a compaction: the summary is there, and history starts with a user message.
    const requests = model.chatRequests();
    const afterCompaction = requests.filter((r, idx) => callKind(r) === 'main' && idx > 0 && callKind(requests[idx - 1]!) === 'compact');
    expect(afterCompaction).toHaveLength(triggered.length);
    for (const r of afterCompaction) {
      const systems = (r.body?.messages ?? []).filter((m) => m.role === 'system').map((m) => String(m.content));
      expect(systems.some((s) => s.includes(FIVE_SECTION_SUMMARY.split('\n')[1]!))).toBe(true);
      expect(nonSystem(r)[0]!.role).toBe('user');
    }
  }, 120_000);
});
