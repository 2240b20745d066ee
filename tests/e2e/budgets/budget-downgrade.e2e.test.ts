/**
 * Issue 25, acceptance 1 (`downgrade`): with `budgets.on_exceed: downgrade` and `downgrade_to: "summarizer"`,
 * a MEMBER whose daily budget is spent is not refused: their next calls go to the summarizer's cheaper
 * model, they are told once (in their Telegram chat), and those calls are still recorded with their cost.
 * The main model's calls cost $0.20 (100 + 100 tokens at $1000 per million), the cheap model's $0.0002.
 */
import { randomBytes } from 'node:crypto';
import { createUserWithToken, eventually } from '../../support/chat-helpers';
import { dataOf } from '../../support/graphql-client';
import { LinkIdentityDocument } from '../../support/graphql/generated';
import { FakeClock } from '../../support/fakes/fake-clock';
import { FakeOpenAIServer, FakeReplies } from '../../support/fakes/fake-openai-server';
import { lastUserText } from '../../support/model-requests';
import { FakeTelegramServer } from '../../support/fakes/fake-telegram-server';
import { startTestApp, type TestApp } from '../../support/test-app';
import { UsageRecord } from '../../../server/modules/usage';
import { Session } from '../../../server/modules/sessions';

jest.setTimeout(60_000);

const ZONE = 'Europe/Berlin';
const METRICS_TOKEN = 'metrics-token-of-the-downgrade-test';

describe('budgets: on_exceed downgrade', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let tg: FakeTelegramServer;
  const clock = new FakeClock();

  beforeAll(async () => {
    clock.set(new Date('2030-03-10T10:00:00Z')); // 11:00 in Berlin
    model = await FakeOpenAIServer.start({ models: ['big-model', 'cheap-model', 'fake-embed'] });
    model.setDefault((req) => FakeReplies.text(`${String(req.body?.model)} says: ${lastUserText(req).slice(0, 40)}`, { usage: { prompt_tokens: 100, completion_tokens: 100 } }));
    const token = `${100000 + (randomBytes(3).readUIntBE(0, 3) % 800000)}:AA${randomBytes(24).toString('base64url').slice(0, 33)}`;
    tg = await FakeTelegramServer.start({ token });
    t = await startTestApp({
      clock,
      config: {
        ai: {
          providers: { fake: { base_url: model.baseUrl, model: 'big-model', max_concurrency: 4 } },
          roles: { summarizer: { provider: 'fake', model: 'cheap-model' }, embeddings: { provider: 'fake', model: 'fake-embed' } },
        },
        pricing: { 'fake/big-model': { input_per_mtok: 1000, output_per_mtok: 1000 }, 'cheap-model': { input_per_mtok: 1, output_per_mtok: 1 } },
        budgets: { defaults: { MEMBER: { daily_usd: 0.4 } }, on_exceed: 'downgrade', downgrade_to: 'summarizer', max_output_tokens: 200, timezone: ZONE },
        session: { summarizer_mode: 'manual' },
        channels: { telegram: { enabled: true, bot_token: token, api_root: tg.url } },
        metrics: { token: METRICS_TOKEN },
        log: { level: 'warn' },
      },
    });
    await tg.waitFor(() => t.app.chat!.channels.get('telegram')?.status().state === 'POLLING', 'telegram polling');
  });
  afterAll(async () => {
    await t?.close();
    await model?.close();
    await tg?.close();
  });

  it('once the day is spent the next calls go to the cheaper role, the user is told once, and the calls are still charged', async () => {
    const owner = t.client(t.ownerToken);
    const user = await createUserWithToken(owner, 'Thrifty', 'MEMBER');
    dataOf(await owner.http(LinkIdentityDocument, { input: { userId: user.id, channel: 'telegram', handle: '901' } }));
    const answers: string[] = [];
    for (let i = 1; i <= 4; i++) {
      const before = tg.sentTo(901).length;
      tg.pushMessage({ chatId: 901, from: 901, text: `thrift ${i}` });
      answers.push(await tg.waitFor(() => tg.sentTo(901).slice(before).find((m) => m.text.includes(' says: '))?.text, `the answer to turn ${i}`));
    }
    // Two turns fit the $0.40 day on the big model; the third and fourth go to the summarizer's model.
    expect(answers).toEqual(['big-model says: thrift 1', 'big-model says: thrift 2', 'cheap-model says: thrift 3', 'cheap-model says: thrift 4']);
    const calls = model.chatRequests().filter((r) => lastUserText(r).startsWith('thrift '));
    expect(calls.map((r) => [lastUserText(r), r.body?.model])).toEqual([
      ['thrift 1', 'big-model'],
      ['thrift 2', 'big-model'],
      ['thrift 3', 'cheap-model'],
      ['thrift 4', 'cheap-model'],
    ]);
    // Told once, before the first downgraded answer; never refused.
    const texts = tg.sentTo(901).map((m) => m.text);
    const notices = texts.filter((x) => x.startsWith('💸'));
    expect(notices).toEqual([`💸 Your daily budget is used up, so until it resets at 2030-03-11 00:00 ${ZONE} (in 13 h) your answers come from a smaller, cheaper model.`]);
    expect(texts.indexOf(notices[0]!)).toBeLessThan(texts.indexOf('cheap-model says: thrift 3'));
    expect(texts.some((x) => x.startsWith('⛔'))).toBe(false);
    // The usage table records every call with the model that ran it and its cost.
    const rows = (await t.app.db.repo(t.app.systemCtx('test'), UsageRecord).find({ where: { userId: user.id }, order: { id: 'ASC' } })).filter((r) => r.role !== 'embeddings');
    expect(rows.map((r) => [r.model, r.costUsd])).toEqual([
      ['big-model', 0.2],
      ['big-model', 0.2],
      ['cheap-model', 0.0002],
      ['cheap-model', 0.0002],
    ]);
    // Prometheus: cost by provider, model and trust level, never by user.
    const scrape = await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    const costLines = scrape.split('\n').filter((l) => l.startsWith('muninn_model_cost_usd_total{'));
    expect(costLines.find((l) => l.includes('model="big-model"'))).toMatch(/^muninn_model_cost_usd_total\{[^}]*trust="MEMBER"[^}]*\} 0\.4$/);
    expect(costLines.find((l) => l.includes('model="cheap-model"'))).toMatch(/trust="MEMBER".*\} 0\.0004$/);
    expect(scrape).not.toContain(user.id);
    // The GraphQL path is not refused either: sendMessage is accepted and answered by the cheap model.
    const member = t.client(user.token);
    const web = await member.http<{ sendMessage: { status: string } }, unknown>(/* GraphQL */ `mutation ($input: SendMessageInput!) { sendMessage(input: $input) { status } }`, { input: { text: 'thrift web' } });
    expect(web.errors).toBeUndefined();
    const webCall = await eventually(() => model.chatRequests().find((r) => lastUserText(r) === 'thrift web'), 20_000, 'the web turn');
    expect(webCall.body?.model).toBe('cheap-model');
    await member.close();

    // The summarizer works for the session's user: compacting their chat (here at the OWNER's request) is charged to them.
    const session = await t.app.db.repo(t.app.systemCtx('test'), Session).findOneByOrFail({ userId: user.id, channel: 'telegram' });
    const compacted = await owner.http<unknown, unknown>(/* GraphQL */ `mutation ($id: ID!) { compactSession(sessionId: $id) { id } }`, { id: session.id });
    expect(compacted.errors).toBeUndefined();
    const summaries = await t.app.db.repo(t.app.systemCtx('test'), UsageRecord).findBy({ userId: user.id, role: 'summarizer' });
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries.every((r) => r.model === 'cheap-model' && r.costUsd === 0.0002)).toBe(true);
    await owner.close();
  });
});
