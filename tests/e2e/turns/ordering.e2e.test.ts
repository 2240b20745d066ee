import { In } from 'typeorm';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { Message, MessageRole, MessageStatus } from '../../../server/modules/sessions';

const SESSIONS = 20;
const PER_SESSION = 25;

function lastUserText(req: RecordedRequest): string {
  const users = (req.body?.messages ?? []).filter((m) => m.role === 'user');
  const content = users[users.length - 1]?.content;
  return typeof content === 'string' ? content : JSON.stringify(content);
}

function shuffle<T>(items: T[]): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

describe('turn ordering: 20 sessions × 25 messages sent concurrently in random order', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start({ chunks: 2, chunkDelayMs: 2 });
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 8 } } },
        queues: { turn_concurrency: 8 },
        // Only the turns matter here; exchange summaries would double the model calls and writes.
        session: { summarizer_mode: 'manual' },
        log: { level: 'warn' },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  it('answers every message once, in arrival order per session, never two turns of a session at once', async () => {
    const owner = t.client(t.ownerToken);
    const users = await Promise.all(Array.from({ length: SESSIONS }, (_, u) => createUserWithToken(owner, `user ${u}`, 'MEMBER')));
    const clients = users.map((u) => t.client(u.token));
    const jobs = shuffle(users.flatMap((_, u) => Array.from({ length: PER_SESSION }, (_, m) => ({ u, m }))));
    // Per user, messages go out in index order; across users everything is interleaved and concurrent.
    const nextIndex = new Array<number>(SESSIONS).fill(0);
    const queue = jobs.map((j) => j.u);
    const sessionOf = new Map<number, string>();
    await Promise.all(
      Array.from({ length: 25 }, async () => {
        for (let u = queue.shift(); u !== undefined; u = queue.shift()) {
          const m = nextIndex[u]!++;
          const turn = await send(clients[u]!, `u${u}-m${m}`);
          sessionOf.set(u, turn.sessionId);
        }
      }),
    );
    const sessionIds = [...sessionOf.values()];
    expect(new Set(sessionIds).size).toBe(SESSIONS);

    const repo = t.app.db.repo(t.app.systemCtx('test'), Message);
    await eventually(
      async () => (await repo.countBy({ sessionId: In(sessionIds), role: MessageRole.ASSISTANT })) === SESSIONS * PER_SESSION,
      240_000,
      'every message to be answered',
    );
    const all = await repo.find({ where: { sessionId: In(sessionIds) }, order: { id: 'ASC' } });
    const requests = model.chatRequests();
    for (const sessionId of sessionIds) {
      const inbound = all.filter((m) => m.sessionId === sessionId && m.role === MessageRole.USER);
      const replies = all.filter((m) => m.sessionId === sessionId && m.role === MessageRole.ASSISTANT);
      expect(inbound).toHaveLength(PER_SESSION);
      expect(inbound.every((m) => m.status === MessageStatus.DONE)).toBe(true);
      // Exactly one reply per message, and replies in arrival order.
      expect(replies.map((r) => r.replyToId)).toEqual(inbound.map((m) => m.id));
      expect(replies.map((r) => r.content)).toEqual(inbound.map((m) => `Echo: ${m.content}`));
      // The model saw this session's messages in arrival order, one turn at a time.
      const texts = new Set(inbound.map((m) => m.content));
      const mine = requests.filter((r) => texts.has(lastUserText(r))).sort((a, b) => a.startedAt - b.startedAt);
      expect(mine.map(lastUserText)).toEqual(inbound.map((m) => m.content));
      for (let i = 1; i < mine.length; i++) {
        expect(mine[i]!.startedAt).toBeGreaterThanOrEqual(mine[i - 1]!.endedAt!);
      }
    }
    // Sessions did run in parallel: some requests of different sessions overlapped.
    const sorted = [...requests].sort((a, b) => a.startedAt - b.startedAt);
    const overlaps = sorted.filter((r, i) => i > 0 && r.startedAt < sorted[i - 1]!.endedAt!).length;
    expect(overlaps).toBeGreaterThan(0);
    await Promise.all(clients.map((c) => c.close()));
    await owner.close();
  }, 300_000);
});
