import { Redis } from 'ioredis';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { lastUserText } from '../pipeline/pipeline-helpers';
import { newId } from '../../../server/common/ids';
import { Message, MessageRole, MessageStatus } from '../../../server/modules/sessions';

/**
 * Turns answered in the process that stored their message (no hop through the turns queue), with their
 * two safety nets: a message stored while its session's turn runs is left to that turn's holder (the
 * lock's mark), and a session whose holder died mid-turn is picked up by the stale-session sweep.
 */
describe('turns answered where their message was stored', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let redis: Redis;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    model.setDefault((req) => ({ text: `Reply to ${lastUserText(req)}`, chunks: 2 }));
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } } },
        session: { summarizer_mode: 'manual' },
        log: { level: 'warn' },
      },
    });
    redis = new Redis(t.app.redis!.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    redis.disconnect();
    await t.close();
    await model.close();
  });

  /** Jobs the turns queue has seen in any state. */
  async function turnJobs(): Promise<number> {
    const owner = t.client(t.ownerToken);
    try {
      const res = await owner.http<{ queues: Array<{ name: string; counts: Record<string, number> }> }, unknown>(
        '{ queues { name counts { waiting active delayed prioritized completed failed } } }',
      );
      const turns = res.data!.queues.find((q) => q.name === 'turns')!;
      return Object.values(turns.counts).reduce((a, b) => a + b, 0);
    } finally {
      await owner.close();
    }
  }

  async function replies(sessionId: string): Promise<Message[]> {
    return t.app.db.repo(t.app.systemCtx('test'), Message).find({ where: { sessionId, role: MessageRole.ASSISTANT }, order: { id: 'ASC' } });
  }

  it('answers messages in order, one sent while the turn before it runs included, without a turns-queue job', async () => {
    const user = await createUserWithToken(t.client(t.ownerToken), 'direct', 'MEMBER');
    const client = t.client(user.token);
    const jobsBefore = await turnJobs();
    const first = await send(client, 'one');
    await eventually(async () => (await replies(first.sessionId)).length === 1, 20_000, 'the first reply');
    // The next turn is slow, and a message comes while it runs: it is left to that turn's holder.
    model.setDefault((req) => ({ text: `Reply to ${lastUserText(req)}`, chunks: 2, delayMs: lastUserText(req) === 'two' ? 400 : 0 }));
    const second = await send(client, 'two', first.sessionId);
    await eventually(() => model.chatRequests().some((r) => lastUserText(r) === 'two'), 10_000, 'the slow turn to start');
    const third = await send(client, 'three', first.sessionId);
    expect([second.status, third.status]).toEqual(['QUEUED', 'QUEUED']);
    await eventually(async () => (await replies(first.sessionId)).length === 3, 20_000, 'every reply');
    expect((await replies(first.sessionId)).map((m) => m.content)).toEqual(['Reply to one', 'Reply to two', 'Reply to three']);
    const users = await t.app.db.repo(t.app.systemCtx('test'), Message).findBy({ sessionId: first.sessionId, role: MessageRole.USER });
    expect(users.map((m) => m.status)).toEqual([MessageStatus.DONE, MessageStatus.DONE, MessageStatus.DONE]);
    expect(await turnJobs()).toBe(jobsBefore);
    expect(await redis.exists(`${t.config.redis.prefix}:turn:mark:${first.sessionId}`)).toBe(0);
    await client.close();
  });

  it('answers a message its dead holder left mid-turn once the sweep looks at stale sessions', async () => {
    const user = await createUserWithToken(t.client(t.ownerToken), 'orphaned', 'MEMBER');
    const client = t.client(user.token);
    const first = await send(client, 'before');
    await eventually(async () => (await replies(first.sessionId)).length === 1, 20_000, 'the first reply');
    // A process that died while answering: its message PROCESSING for a minute, its lock still in Redis.
    const repo = t.app.db.repo(t.app.systemCtx('test'), Message);
    const long = new Date(Date.now() - 60_000);
    const left = repo.create({ id: newId(), createdAt: long, updatedAt: long, sessionId: first.sessionId, userId: user.id, role: MessageRole.USER, content: 'left behind', status: MessageStatus.PROCESSING, turnId: newId() });
    await repo.save(left);
    const lockKey = `${t.config.redis.prefix}:turn:lock:${first.sessionId}`;
    await redis.set(lockKey, `gone-host:1:deadbeef|${newId()}`, 'PX', 30_000);
    // A message stored now is not left to the dead holder: it is handed on and answered after the old one.
    await send(client, 'after', first.sessionId);
    await eventually(async () => (await replies(first.sessionId)).length === 3, 20_000, 'both waiting messages to be answered');
    expect((await replies(first.sessionId)).map((m) => m.content)).toEqual(['Reply to before', 'Reply to left behind', 'Reply to after']);

    // Nothing stands for a stale message but the sweep: it finds it and the session is answered.
    const stale = repo.create({ id: newId(), createdAt: long, updatedAt: long, sessionId: first.sessionId, userId: user.id, role: MessageRole.USER, content: 'stale', status: MessageStatus.PROCESSING, turnId: newId() });
    await repo.save(stale);
    await redis.set(lockKey, `gone-host:2:deadbeef|${newId()}`, 'PX', 30_000);
    expect(await t.app.chat!.turns.recoverStale(t.app.logger, 30_000)).toBe(1);
    await eventually(async () => (await replies(first.sessionId)).length === 4, 20_000, 'the stale message to be answered');
    expect((await replies(first.sessionId)).at(-1)!.content).toBe('Reply to stale');
    // A fresh message that waits (the holder lives) is not the sweep's business.
    expect(await t.app.chat!.turns.recoverStale(t.app.logger, 30_000)).toBe(0);
    await client.close();
  });
});
