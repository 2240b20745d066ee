/**
 * Issue 25, acceptance 1, 3, 4 and part of 5: budgets end to end on a real server (SQLite or PostgreSQL,
 * Redis, BullMQ workers) with a fake model that reports usage and a fake Telegram Bot API. Every call
 * costs exactly $0.20 (100 + 100 tokens at $1000 per million), so limits are a known number of turns.
 * Time is a fake clock at a fixed instant; budget days begin at midnight in Pacific/Auckland.
 */
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../../support/fakes/fake-clock';
import { FakeOpenAIServer, FakeReplies } from '../../support/fakes/fake-openai-server';
import { lastUserText } from '../../support/model-requests';
import { FakeTelegramServer } from '../../support/fakes/fake-telegram-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { LinkIdentityDocument } from '../../support/graphql/generated';
import { EventCollector } from '../../support/session-events';
import { startTestApp, type TestApp } from '../../support/test-app';
import { Message, MessageRole, Session } from '../../../server/modules/sessions';
import { UsageRecord } from '../../../server/modules/usage';

jest.setTimeout(60_000);

const ZONE = 'Pacific/Auckland';
/** 2030-01-15 22:00 in Auckland (NZDT, UTC+13): two hours before the budget day ends. */
const START = new Date('2030-01-15T09:00:00Z');
const SET_BUDGET = /* GraphQL */ `
  mutation SetBudget($userId: ID!, $daily: Float, $monthly: Float) {
    setUserBudget(userId: $userId, dailyUsd: $daily, monthlyUsd: $monthly) { dailyUsd monthlyUsd spentTodayUsd custom }
  }
`;
const ME_BUDGET = /* GraphQL */ `query { me { budget { dailyUsd monthlyUsd spentTodayUsd spentMonthUsd resetsAt custom } } }`;
const USAGE = /* GraphQL */ `
  query Usage($from: DateTimeISO!, $to: DateTimeISO!, $userId: ID) {
    usage(from: $from, to: $to, groupBy: MODEL, userId: $userId) { key calls costUsd unpricedCalls }
  }
`;
const CREATE_BEAT = /* GraphQL */ `
  mutation CreateBeat($input: CreateBeatInput!) { createBeat(input: $input) { id } }
`;
const RUN_BEAT = /* GraphQL */ `mutation RunBeat($id: ID!) { runBeat(id: $id) { status error } }`;
const BEAT_RUNS = /* GraphQL */ `query BeatRuns($id: ID!) { beatRuns(beatId: $id) { edges { node { status error } } } }`;
const CREATE_HOOK = /* GraphQL */ `
  mutation CreateWebhook($input: CreateWebhookInput!) { createWebhook(input: $input) { secret path } }
`;

describe('budgets', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let tg: FakeTelegramServer;
  let owner: GraphQLTestClient;
  const clock = new FakeClock();
  const clients: GraphQLTestClient[] = [];
  const client = (token: string) => {
    const c = t.client(token);
    clients.push(c);
    return c;
  };
  const setBudget = async (userId: string, daily: number | null, monthly: number | null = null) => dataOf(await owner.http<{ setUserBudget: unknown }, unknown>(SET_BUDGET, { userId, daily, monthly })).setUserBudget;
  const linkTelegram = async (tgId: number) => {
    const user = await createUserWithToken(owner, `tg ${tgId}`, 'MEMBER');
    dataOf(await owner.http(LinkIdentityDocument, { input: { userId: user.id, channel: 'telegram', handle: String(tgId) } }));
    return user;
  };
  const requestsFrom = (marker: string) => model.chatRequests().filter((r) => lastUserText(r).includes(marker));
  /** The user's model calls (embeddings for memory recall have rows of their own, on a model without a price here). */
  const usageRows = async (userId: string) => (await t.app.db.repo(t.app.systemCtx('test'), UsageRecord).find({ where: { userId }, order: { id: 'ASC' } })).filter((r) => r.role !== 'embeddings');

  beforeAll(async () => {
    clock.set(START);
    model = await FakeOpenAIServer.start({ models: ['fake-model', 'fake-embed'] });
    model.setDefault((req) => FakeReplies.text(`Echo: ${lastUserText(req).slice(0, 60)}`, { usage: { prompt_tokens: 100, completion_tokens: 100 } }));
    const token = `${100000 + (randomBytes(3).readUIntBE(0, 3) % 800000)}:AA${randomBytes(24).toString('base64url').slice(0, 33)}`;
    tg = await FakeTelegramServer.start({ token });
    t = await startTestApp({
      clock,
      config: {
        ai: {
          providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } },
          // Embeddings on a model without a price: they count tokens, not dollars, so turns cost exactly $0.20.
          roles: { embeddings: { provider: 'fake', model: 'fake-embed' } },
        },
        pricing: { 'fake/fake-model': { input_per_mtok: 1000, output_per_mtok: 1000 } },
        budgets: { defaults: { MEMBER: { daily_usd: 0.4 } }, max_output_tokens: 200, timezone: ZONE },
        session: { summarizer_mode: 'manual' },
        channels: { telegram: { enabled: true, bot_token: token, api_root: tg.url } },
        log: { level: 'warn' },
      },
    });
    owner = t.client(t.ownerToken);
    await tg.waitFor(() => t.app.chat!.channels.get('telegram')?.status().state === 'POLLING', 'telegram polling');
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await owner?.close();
    await t?.close();
    await model?.close();
    await tg?.close();
  });

  it('Telegram: a MEMBER with a budget of five turns gets five answers, one 80 % warning, then the block message with its reset time; /usage shows it', async () => {
    const user = await linkTelegram(801);
    expect(await setBudget(user.id, 1.0)).toEqual({ dailyUsd: 1, monthlyUsd: null, spentTodayUsd: 0, custom: true });
    for (let i = 1; i <= 6; i++) {
      const before = tg.sentTo(801).length;
      tg.pushMessage({ chatId: 801, from: 801, text: `tg turn ${i}` });
      await tg.waitFor(() => tg.sentTo(801).slice(before).some((m) => m.text.startsWith('Echo:') || m.text.startsWith('⛔')), `the answer to turn ${i}`);
    }
    const texts = tg.sentTo(801).map((m) => m.text);
    // Five calls ran ($0.20 each, admitted while less than $1.00 was spent); the sixth never reached the model.
    expect(texts.filter((x) => x.startsWith('Echo: tg turn'))).toHaveLength(5);
    expect(requestsFrom('tg turn')).toHaveLength(5);
    expect(requestsFrom('tg turn 6')).toHaveLength(0);
    // The budgeted user's calls may write at most budgets.max_output_tokens.
    expect(requestsFrom('tg turn 1')[0]!.body?.max_tokens).toBe(200);
    const warnings = texts.filter((x) => x.includes('of your daily budget'));
    expect(warnings).toEqual([`⚠️ You have used 80 % of your daily budget ($0.80 of $1.00). It resets at 2030-01-16 00:00 ${ZONE} (in 2 h).`]);
    // The warning came right after the fourth call, before its answer.
    expect(texts.indexOf(warnings[0]!)).toBe(texts.indexOf('Echo: tg turn 4') - 1);
    expect(texts.at(-1)).toBe(
      `⛔ Your daily budget of $1.00 is used up ($1.00 spent), so I cannot answer until it resets at 2030-01-16 00:00 ${ZONE} (in 2 h). Ask an admin if you need more.`,
    );
    // The usage table is the record: five rows of $0.20.
    const rows = await usageRows(user.id);
    expect(rows.map((r) => r.costUsd)).toEqual([0.2, 0.2, 0.2, 0.2, 0.2]);

    const before = tg.sentTo(801).length;
    tg.pushMessage({ chatId: 801, from: 801, text: '/usage' });
    const [usage] = (await tg.waitForSent(801, before + 1)).slice(before);
    expect(usage!.text).toContain('This session: 5 model calls, 500 input tokens, 500 output tokens, 0 cache reads, $1.00.');
    expect(usage!.text).toContain('Spent today: $1.00 of $1.00 · this month: $1.00 (unlimited)');
    expect(usage!.text).toContain(`Resets: daily at 2030-01-16 00:00 ${ZONE}`);
  });

  it('GraphQL: over budget, sendMessage fails with BUDGET_EXCEEDED; me.budget, usage rows and costs say why; the owner is unlimited', async () => {
    const member = await createUserWithToken(owner, 'Web Member', 'MEMBER');
    const c = client(member.token);
    const first = await send(c, 'web turn 1');
    const events = new EventCollector(c.wsClient(), first.sessionId);
    await events.waitFor((es) => es.filter((e) => e.__typename === 'TurnFinished').length === 1);
    await send(c, 'web turn 2');
    await events.waitFor((es) => es.filter((e) => e.__typename === 'TurnFinished').length === 2);
    events.stop();

    const refused = await c.http<unknown, unknown>(
      /* GraphQL */ `mutation ($input: SendMessageInput!) { sendMessage(input: $input) { sessionId } }`,
      { input: { text: 'web turn 3' } },
    );
    expect(refused.errors?.[0]?.extensions?.code).toBe('BUDGET_EXCEEDED');
    expect(refused.errors?.[0]?.message).toContain('Your daily budget of $0.40 is used up ($0.40 spent)');
    expect(refused.errors?.[0]?.extensions?.resetsAt).toBe('2030-01-15T11:00:00.000Z');
    expect(requestsFrom('web turn 3')).toHaveLength(0);
    // Slash commands need no model: they still work.
    expect((await send(c, '/usage')).reply).toContain('Spent today: $0.40 of $0.40');

    const budget = dataOf(await c.http<{ me: { budget: Record<string, unknown> } }, unknown>(ME_BUDGET)).me.budget;
    expect(budget).toEqual({ dailyUsd: 0.4, monthlyUsd: null, spentTodayUsd: 0.4, spentMonthUsd: 0.4, resetsAt: '2030-01-15T11:00:00.000Z', custom: false });
    const range = { from: new Date(START.getTime() - 3_600_000), to: new Date(START.getTime() + 86_400_000) };
    const usage = dataOf(await c.http<{ usage: unknown[] }, unknown>(USAGE, range)).usage;
    expect(usage.find((u) => (u as { key: string }).key === 'fake/fake-model')).toEqual({ key: 'fake/fake-model', calls: 2, costUsd: 0.4, unpricedCalls: 0 });
    // A MEMBER may not read someone else's budget.
    const other = await c.http<unknown, unknown>(/* GraphQL */ `query ($id: ID!) { user(id: $id) { budget { dailyUsd } } }`, { id: (await linkTelegram(802)).id });
    expect(other.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    // OWNER: unlimited unless set, and their calls carry no output limit.
    const ownerTurn = await send(owner, 'owner turn');
    await eventually(() => requestsFrom('owner turn').length === 1 || undefined, 10_000, 'the owner turn');
    expect(requestsFrom('owner turn')[0]!.body?.max_tokens).toBeUndefined();
    expect(ownerTurn.status).toBe('QUEUED');
    const ownerBudget = dataOf(await owner.http<{ me: { budget: Record<string, unknown> } }, unknown>(ME_BUDGET)).me.budget;
    expect(ownerBudget).toMatchObject({ dailyUsd: null, monthlyUsd: null });

    // Only ADMIN and above set budgets.
    const denied = await c.http<unknown, unknown>(SET_BUDGET, { userId: member.id, daily: 100 });
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const bad = await owner.http<unknown, unknown>(SET_BUDGET, { userId: member.id, daily: -1 });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('a beat and a webhook of a user over budget are refused the same way, and their history says why', async () => {
    const user = await linkTelegram(803);
    await setBudget(user.id, 0);
    const beat = dataOf(await owner.http<{ createBeat: { id: string } }, unknown>(CREATE_BEAT, { input: { name: 'poor beat', kind: 'TASK', text: 'beat over budget', cron: '0 7 * * *', userId: user.id } })).createBeat;
    const run = dataOf(await owner.http<{ runBeat: { status: string; error: string } }, unknown>(RUN_BEAT, { id: beat.id })).runBeat;
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatch(/^⛔ Your daily budget of \$0\.00 is used up \(\$0\.00 spent\), so I cannot answer until it resets at 2030-01-16 00:00 Pacific\/Auckland/);
    const runs = dataOf(await owner.http<{ beatRuns: { edges: Array<{ node: { status: string; error: string } }> } }, unknown>(BEAT_RUNS, { id: beat.id })).beatRuns.edges;
    expect(runs.map((e) => e.node)).toEqual([{ status: 'FAILED', error: run.error }]);

    const hook = dataOf(await owner.http<{ createWebhook: { secret: string; path: string } }, unknown>(CREATE_HOOK, { input: { name: 'poor-hook', ownerId: user.id } })).createWebhook;
    const res = await fetch(`${t.url}${hook.path}`, { method: 'POST', headers: { authorization: `Bearer ${hook.secret}`, 'content-type': 'application/json' }, body: '{"event":"hook over budget"}' });
    expect(res.status).toBe(202);
    const ctx = t.app.systemCtx('test');
    const reply = await eventually(async () => {
      const session = await t.app.db.repo(ctx, Session).findOneBy({ key: 'hook:poor-hook' });
      return session ? ((await t.app.db.repo(ctx, Message).findOneBy({ sessionId: session.id, role: MessageRole.ASSISTANT })) ?? undefined) : undefined;
    });
    expect(reply.status).toBe('FAILED');
    expect(reply.content).toBe(run.error);
    // The hook's result goes to its owner's principal chat (their Telegram DM), saying the same.
    await tg.waitFor(() => tg.sentTo(803).some((m) => m.text === `🔔 poor-hook\n${run.error}`), 'the webhook result in the owner chat');
    expect(requestsFrom('over budget')).toHaveLength(0);
    expect(await usageRows(user.id)).toHaveLength(0);
  });

  it('days begin at midnight in the configured time zone: after it the user may spend again and is warned once more', async () => {
    const user = await linkTelegram(804);
    await setBudget(user.id, 0.2);
    const turn = async (text: string) => {
      const before = tg.sentTo(804).length;
      tg.pushMessage({ chatId: 804, from: 804, text });
      return tg.waitFor(() => tg.sentTo(804).slice(before).find((m) => m.text.startsWith('Echo:') || m.text.startsWith('⛔'))?.text, `the answer to ${text}`);
    };
    clock.set(new Date('2030-01-15T10:50:00Z')); // 23:50 in Auckland, the same UTC day as below
    expect(await turn('before midnight 1')).toBe('Echo: before midnight 1');
    expect(await turn('before midnight 2')).toMatch(/^⛔ Your daily budget of \$0\.20 is used up .* resets at 2030-01-16 00:00 Pacific\/Auckland \(in 10 min\)/);
    clock.set(new Date('2030-01-15T11:05:00Z')); // 00:05 on the 16th in Auckland, still the 15th in UTC
    expect(await turn('after midnight 1')).toBe('Echo: after midnight 1');
    expect(await turn('after midnight 2')).toMatch(/resets at 2030-01-17 00:00 Pacific\/Auckland \(in 23 h 55 min\)/);
    const warnings = tg.sentTo(804).filter((m) => m.text.includes('of your daily budget ('));
    // One warning per day: the first day's and the second day's.
    expect(warnings.map((m) => m.text)).toEqual([
      `⚠️ You have used 100 % of your daily budget ($0.20 of $0.20). It resets at 2030-01-16 00:00 ${ZONE} (in 10 min).`,
      `⚠️ You have used 100 % of your daily budget ($0.20 of $0.20). It resets at 2030-01-17 00:00 ${ZONE} (in 23 h 55 min).`,
    ]);
    const status = dataOf(await owner.http<{ user: { budget: Record<string, unknown> } }, unknown>(/* GraphQL */ `query ($id: ID!) { user(id: $id) { budget { spentTodayUsd spentMonthUsd resetsAt } } }`, { id: user.id })).user.budget;
    expect(status).toEqual({ spentTodayUsd: 0.2, spentMonthUsd: 0.4, resetsAt: '2030-01-16T11:00:00.000Z' });
  });
});
