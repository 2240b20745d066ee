/**
 * Issue 9, beats acceptance 2: a beat on a short schedule (every second; the OWNER is not held to the
 * 5-minute floor) fires on its ticks, exactly once per tick with two worker processes; every run is in
 * `beatRuns` and on the `beatRuns` subscription; each result reaches the fake Telegram chat once; after
 * the workers are stopped and a new one starts, the schedule keeps firing without being set again.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnWorker } from '../../support/worker-spawn';
import path from 'node:path';
import { eventually } from '../../support/chat-helpers';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { FakeTelegramServer } from '../../support/fakes/fake-telegram-server';
import { dataOf } from '../../support/graphql-client';
import {
  BeatRunsDocument,
  CreateBeatDocument,
  LinkIdentityDocument,
  MeDocument,
  UpdateBeatDocument,
  type BeatRunFieldsFragment,
} from '../../support/graphql/generated';
import { startTestApp, type TestApp } from '../../support/test-app';
import { newBotToken } from '../telegram/telegram-kit';
import { BeatRun } from '../../../server/modules/beats';

const ROOT = path.resolve(__dirname, '../../..');
const CHAT = '777001';

function startWorker(t: TestApp): Promise<ChildProcess> {
  return spawnWorker(t.config, undefined, 40_000);
}

function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

describe('a beat every second with two worker processes', () => {
  let t: TestApp;
  let tg: FakeTelegramServer;
  let model: FakeOpenAIServer;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    const token = newBotToken();
    tg = await FakeTelegramServer.start({ token });
    model = await FakeOpenAIServer.start();
    let n = 0;
    model.setDefault(() => ({ text: `Briefing number ${++n}` }));
    t = await startTestApp({
      workers: false,
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } } },
        // Webhook mode: two processes would fight over one getUpdates poller; sending is the same.
        channels: { telegram: { enabled: true, bot_token: token, api_root: tg.url, webhook_url: 'https://muninn.example.test' } },
        beats: { default_file: path.join(ROOT, 'tests/e2e/beats/no-such-file.json') },
        log: { level: 'warn' },
      },
    });
  }, 60_000);

  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await t.close();
    await tg.close();
    await model.close();
  });

  it('fires on its ticks, once per tick, delivers each result once, and keeps firing after a restart', async () => {
    const owner = t.client(t.ownerToken);
    const me = dataOf(await owner.http(MeDocument, {})).me;
    dataOf(await owner.http(LinkIdentityDocument, { input: { userId: me.id, channel: 'telegram', handle: CHAT } }));
    workers.push(await startWorker(t), await startWorker(t));

    const feed: BeatRunFieldsFragment[] = [];
    const ws = owner.wsClient();
    const unsubscribe = ws.subscribe<{ beatRuns: BeatRunFieldsFragment }>(
      { query: 'subscription { beatRuns { id beatId status trigger output } }' },
      { next: (v) => void (v.data && feed.push(v.data.beatRuns)), error: () => undefined, complete: () => undefined },
    );

    const beat = dataOf(await owner.http(CreateBeatDocument, { input: { name: 'every second', kind: 'TASK', text: 'Write the briefing', cron: '* * * * * *' } })).createBeat;
    expect(beat.nextRuns).toHaveLength(5);
    const runsOf = async () => dataOf(await owner.http(BeatRunsDocument, { beatId: beat.id, first: 100 })).beatRuns.edges.map((e) => e.node);
    await eventually(async () => (await runsOf()).filter((r) => r.status === 'OK').length >= 4, 30_000, 'four finished runs');

    // Restart: both workers stop; a new one picks the schedule up from Redis.
    await Promise.all(workers.splice(0).map(stopWorker));
    const before = (await runsOf()).length;
    workers.push(await startWorker(t));
    await eventually(async () => (await runsOf()).filter((r) => r.status === 'OK').length >= before + 2, 30_000, 'runs after the restart');
    dataOf(await owner.http(UpdateBeatDocument, { id: beat.id, input: { enabled: false } }));
    await eventually(async () => (await runsOf()).every((r) => r.status !== 'RUNNING'), 15_000, 'no run in flight');

    const runs = await runsOf();
    expect(runs.every((r) => r.status === 'OK' && r.trigger === 'SCHEDULE' && r.sessionId && r.error === null)).toBe(true);
    // One run per tick: every tick (a second of the schedule) appears once, and none ran before its time.
    const rows = await t.app.db.repo(t.app.systemCtx('test'), BeatRun).findBy({ beatId: beat.id });
    const ticks = rows.map((r) => Number(r.tick.split(':').pop()));
    expect(new Set(ticks).size).toBe(rows.length);
    for (const r of rows) {
      const tick = Number(r.tick.split(':').pop());
      expect(tick % 1000).toBe(0);
      expect(r.createdAt.getTime()).toBeGreaterThanOrEqual(tick);
    }
    // Each result reached the Telegram chat once, under the beat's name; nothing else was sent there.
    const sent = await tg.waitFor(() => (tg.sentTo(CHAT).length >= runs.length ? tg.sentTo(CHAT) : null), 'every result in the chat', 15_000);
    expect(sent.map((m) => m.text).sort()).toEqual(runs.map((r) => `⏰ every second\n${r.output!}`).sort());
    expect(new Set(sent.map((m) => m.text)).size).toBe(sent.length);
    // The model was asked for every run (a model call whose job stalled on a loaded machine is asked
    // again), each time with the instruction alone: no earlier run in the prompt.
    expect(model.chatRequests().length).toBeGreaterThanOrEqual(runs.length);
    for (const req of model.chatRequests()) {
      const users = (req.body?.messages ?? []).filter((m) => m.role === 'user');
      expect(users.map((m) => m.content)).toEqual(['Write the briefing']);
    }
    // The subscription saw every run finish.
    await eventually(() => runs.every((r) => feed.some((f) => f.id === r.id && f.status === 'OK')), 10_000, 'every run on the subscription');
    unsubscribe();
    await owner.close();
  }, 150_000);
});
