/**
 * Beats: after `beats.max_failures` failed runs in a row the beat is disabled, its schedule leaves the
 * heartbeat queue and its owner is told in their chat; `/beats` shows it; a one-shot reminder is
 * delivered as is (no model call) and is done after its run.
 */
import { eventually, send } from '../../support/chat-helpers';
import { FakeOpenAIServer, FakeReplies } from '../../support/fakes/fake-openai-server';
import { dataOf } from '../../support/graphql-client';
import { BeatDocument, BeatRunsDocument, CreateBeatDocument, RunBeatDocument, UpdateBeatDocument } from '../../support/graphql/generated';
import { EventCollector } from '../../support/session-events';
import { startTestApp, type TestApp } from '../../support/test-app';

describe('beat failures and one-shot reminders', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model' } }, max_retries: 0 },
        session: { summarizer_mode: 'manual' },
        beats: { max_failures: 2 },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  it('disables a beat after max_failures failed runs in a row and tells its owner', async () => {
    const owner = t.client(t.ownerToken);
    const { sessionId } = await send(owner, '/whoami'); // the owner's web session: their principal chat here
    const events = new EventCollector(owner.wsClient(), sessionId);
    const beat = dataOf(await owner.http(CreateBeatDocument, { input: { name: 'flaky', kind: 'TASK', text: 'Fetch the report', cron: '0 7 * * *' } })).createBeat;
    expect(await t.app.chat!.beats.scheduler.scheduledBeatIds()).toContain(beat.id);

    model.reset();
    model.enqueue(FakeReplies.serverError(500), FakeReplies.serverError(500));
    const run = async () => dataOf(await owner.http(RunBeatDocument, { id: beat.id })).runBeat;
    const first = await run();
    expect(first.status).toBe('FAILED');
    expect(first.error).toBeTruthy();
    expect(dataOf(await owner.http(BeatDocument, { id: beat.id })).beat).toMatchObject({ enabled: true, consecutiveFailures: 1 });

    expect((await run()).status).toBe('FAILED');
    const after = dataOf(await owner.http(BeatDocument, { id: beat.id })).beat;
    expect(after).toMatchObject({ enabled: false, consecutiveFailures: 2, nextRunAt: null, nextRuns: [] });
    expect(await t.app.chat!.beats.scheduler.scheduledBeatIds()).not.toContain(beat.id);
    const notices = await events.waitFor((es) => es.some((e) => e.__typename === 'Notice' && String(e.text).includes('flaky')));
    expect(String(notices.find((e) => e.__typename === 'Notice' && String(e.text).includes('flaky'))!.text)).toMatch(
      /^⚠️ Your beat "flaky" failed 2 times in a row and was disabled\. Last error: .+\nFix the cause, then enable it again/,
    );
    // The warning is the server's own, not the beat's result.
    expect(notices.find((e) => e.__typename === 'Notice' && String(e.text).includes('flaky'))!.origin).toBeNull();
    expect((await send(owner, '/beats')).reply).toContain('• flaky — task, 0 7 * * * (UTC); disabled after 2 failures');

    // Enabled again: the count starts afresh and the schedule is back.
    const enabled = dataOf(await owner.http(UpdateBeatDocument, { id: beat.id, input: { enabled: true } })).updateBeat;
    expect(enabled).toMatchObject({ enabled: true, consecutiveFailures: 0 });
    expect(await t.app.chat!.beats.scheduler.scheduledBeatIds()).toContain(beat.id);
    events.stop();
  });

  it('a one-shot reminder is delivered as is at its time, once, and is then done', async () => {
    const owner = t.client(t.ownerToken);
    const { sessionId } = await send(owner, '/whoami');
    const events = new EventCollector(owner.wsClient(), sessionId);
    model.reset();
    const at = new Date(Date.now() + 1500).toISOString();
    const beat = dataOf(await owner.http(CreateBeatDocument, { input: { name: 'tea', kind: 'REMINDER', text: 'The tea is ready 🍵', at } })).createBeat;
    expect(beat.nextRuns).toEqual([new Date(at).toISOString()]);
    const delivered = await events.waitFor((es) => es.some((e) => e.__typename === 'Notice' && e.text === 'The tea is ready 🍵'), 15_000);
    // The chat can say which beat sent it.
    expect(delivered.find((e) => e.__typename === 'Notice' && e.text === 'The tea is ready 🍵')!.origin).toEqual({ kind: 'beat', id: beat.id, name: 'tea' });
    const done = await eventually(async () => {
      const b = dataOf(await owner.http(BeatDocument, { id: beat.id })).beat;
      return !b.enabled && b;
    }, 10_000, 'the one-shot beat done');
    expect(done).toMatchObject({ enabled: false, nextRunAt: null, consecutiveFailures: 0 });
    const runs = dataOf(await owner.http(BeatRunsDocument, { beatId: beat.id })).beatRuns;
    expect(runs.edges.map((e) => e.node)).toEqual([expect.objectContaining({ status: 'OK', trigger: 'SCHEDULE', output: 'The tea is ready 🍵', inputTokens: 0 })]);
    expect(new Date(runs.edges[0]!.node.createdAt).getTime()).toBeGreaterThanOrEqual(new Date(at).getTime());
    expect(model.chatRequests()).toHaveLength(0);
    // A time in the past is refused with the fix.
    const past = await owner.http(CreateBeatDocument, { input: { name: 'late', kind: 'REMINDER', text: 'x', at: '2001-01-01T00:00:00Z' } });
    expect(past.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' }, message: expect.stringMatching(/has passed; give a time in the future/) });
    events.stop();
  });
});
