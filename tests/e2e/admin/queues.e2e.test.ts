import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, FakeReplies } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';

const QUEUES = /* GraphQL */ `
  query Q($state: JobState!) {
    queues { name counts { waiting active delayed failed completed } jobs(state: $state, first: 10) { queue id name state attemptsMade maxAttempts failedReason createdAt finishedAt } }
  }
`;
const RETRY = /* GraphQL */ `mutation R($queue: String!, $id: ID!) { retryJob(queue: $queue, id: $id) { id state } }`;
const REMOVE = /* GraphQL */ `mutation D($queue: String!, $id: ID!) { removeJob(queue: $queue, id: $id) }`;
const AUDIT = /* GraphQL */ `query A($action: String) { auditLog(filter: { action: $action }) { edges { node { action targetId details } } } }`;

interface Job { queue: string; id: string; name: string; state: string; attemptsMade: number; maxAttempts: number; failedReason: string | null; createdAt: string; finishedAt: string | null }
interface QueuesResult { queues: Array<{ name: string; counts: Record<string, number>; jobs: Job[] }> }

/** Issue 10: the `queues` query and the retryJob/removeJob mutations, on the app's real BullMQ queues. */
describe('queue inspection over GraphQL', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let owner: GraphQLTestClient;
  let member: GraphQLTestClient;

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
    member = t.client((await createUserWithToken(owner, 'Mia', 'MEMBER')).token);
  });
  afterAll(async () => {
    await owner.close();
    await member.close();
    await t.close();
    await model.close();
  });

  const failedModelCalls = async () =>
    dataOf(await owner.http<QueuesResult, unknown>(QUEUES, { state: 'FAILED' })).queues.find((q) => q.name === 'model-calls.fake')!;

  it('lists every queue with counts; a model call the provider refuses shows up as a failed job, and retrying it runs it again (audited)', async () => {
    const list = dataOf(await owner.http<QueuesResult, unknown>(QUEUES, { state: 'WAITING' })).queues;
    expect(list.map((q) => q.name)).toEqual(['turns', 'summarizer', 'maintenance', 'heartbeat', 'skills', 'memory', 'ingest', 'voice', 'speech', 'model-calls.fake']);
    for (const q of list) expect(Object.values(q.counts).every((n) => Number.isInteger(n) && n >= 0)).toBe(true);

    model.enqueue({ error: { status: 400, message: 'model refuses this request' } });
    await send(owner, 'please fail');
    const failed = await eventually(async () => {
      const q = await failedModelCalls();
      return q.jobs.length > 0 && q.counts.failed > 0 ? q : undefined;
    });
    const job = failed.jobs[0]!;
    expect(job).toMatchObject({ queue: 'model-calls.fake', name: 'model.call', state: 'FAILED', attemptsMade: 1 });
    expect(job.failedReason).toContain('model refuses this request');
    expect(job.finishedAt).not.toBeNull();

    // MEMBERs may not look or touch.
    expect((await member.http(QUEUES, { state: 'FAILED' })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await member.http(RETRY, { queue: job.queue, id: job.id })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    model.setDefault(() => FakeReplies.text('fine now'));
    const retried = dataOf(await owner.http<{ retryJob: { id: string; state: string } }, unknown>(RETRY, { queue: job.queue, id: job.id })).retryJob;
    expect(retried.id).toBe(job.id);
    expect(retried.state).not.toBe('FAILED');
    await eventually(async () => !(await failedModelCalls()).jobs.some((j) => j.id === job.id));
    const audit = dataOf(await owner.http<{ auditLog: { edges: Array<{ node: { action: string; targetId: string } }> } }, unknown>(AUDIT, { action: 'queue.job.retry' }));
    expect(audit.auditLog.edges.map((e) => e.node.targetId)).toContain(`model-calls.fake:${job.id}`);

    // Only failed jobs can be retried.
    const again = await owner.http(RETRY, { queue: job.queue, id: job.id });
    expect(again.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });

  it('removes a failed job (audited); unknown jobs are NOT_FOUND, unknown queues BAD_USER_INPUT naming the queues', async () => {
    model.enqueue({ error: { status: 400, message: 'refused again' } });
    await send(owner, 'fail once more');
    const job = await eventually(async () => (await failedModelCalls()).jobs.find((j) => j.failedReason?.includes('refused again')));
    expect(dataOf(await owner.http<{ removeJob: boolean }, unknown>(REMOVE, { queue: job.queue, id: job.id })).removeJob).toBe(true);
    expect((await failedModelCalls()).jobs.some((j) => j.id === job.id)).toBe(false);
    const audit = dataOf(await owner.http<{ auditLog: { edges: Array<{ node: { targetId: string } }> } }, unknown>(AUDIT, { action: 'queue.job.remove' }));
    expect(audit.auditLog.edges.map((e) => e.node.targetId)).toContain(`model-calls.fake:${job.id}`);

    expect((await owner.http(REMOVE, { queue: job.queue, id: job.id })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const unknown = await owner.http(RETRY, { queue: 'nope', id: '1' });
    expect(unknown.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(unknown.errors?.[0]?.message).toContain('turns, summarizer');
  });
});
