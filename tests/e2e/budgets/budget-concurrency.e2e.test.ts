/**
 * Issue 25, acceptance 2, and the OpenAI-compatible API's answer to a spent budget: 50 completions at once
 * from one MEMBER through the official `openai` client, their turns run by two worker processes (the test
 * app has none of its own), against one monthly budget. Input is free and output costs $2000 per million
 * with `max_output_tokens` 100, so a call's estimate and its real cost (the fake model reports 100 + 100
 * tokens) are both exactly $0.20: a $2.00 budget admits ten calls, and the usage table may never show more
 * than $2.00 plus one call's estimate. Every refused request is OpenAI's 429 `insufficient_quota` with the
 * code BUDGET_EXCEEDED.
 */
import type { ChildProcess } from 'node:child_process';
import OpenAI from 'openai';
import { createUserWithToken } from '../../support/chat-helpers';
import { dataOf } from '../../support/graphql-client';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { lastUserText } from '../../support/model-requests';
import { startTestApp, type TestApp } from '../../support/test-app';
import { killHard, spawnWorker } from '../../support/worker-spawn';
import { UsageRecord } from '../../../server/modules/usage';

jest.setTimeout(180_000);

const TURNS = 50;
const LIMIT_USD = 2;
const CALL_USD = 0.2;

describe('budgets under concurrency (two worker processes)', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    model = await FakeOpenAIServer.start({ models: ['fake-model', 'fake-embed'] });
    // Slow enough that many calls are in flight at once on both workers.
    model.setDefault((req) => ({ text: `Echo: ${lastUserText(req).slice(0, 40)}`, usage: { prompt_tokens: 100, completion_tokens: 100 }, delayMs: 150 }));
    t = await startTestApp({
      workers: false,
      config: {
        ai: {
          providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 16 } },
          roles: { embeddings: { provider: 'fake', model: 'fake-embed' } },
        },
        pricing: { 'fake/fake-model': { input_per_mtok: 0, output_per_mtok: 2000 } },
        budgets: { defaults: { MEMBER: { monthly_usd: LIMIT_USD } }, max_output_tokens: 100, timezone: 'UTC' },
        queues: { turn_concurrency: 16 },
        session: { summarizer_mode: 'manual' },
        channels: { api: { rate_per_minute: 1000 } },
        log: { level: 'warn' },
      },
    });
    workers.push(await spawnWorker(t.config), await spawnWorker(t.config));
  });
  afterAll(async () => {
    for (const w of workers) await killHard(w);
    await t?.close();
    await model?.close();
  });

  it(`${TURNS} completions at once never spend more than the budget plus one call's estimate; the refused ones are 429 BUDGET_EXCEEDED`, async () => {
    const owner = t.client(t.ownerToken);
    const member = await createUserWithToken(owner, 'Racing Member', 'MEMBER');
    const api = new OpenAI({ apiKey: member.token, baseURL: `${t.url}/v1`, maxRetries: 0, timeout: 120_000 });

    const outcomes = await Promise.all(
      Array.from({ length: TURNS }, (_, i) =>
        api.chat.completions.create({ model: 'muninn', messages: [{ role: 'user', content: `race ${i}` }] }).then(
          (res) => ({ ok: true as const, text: res.choices[0]!.message.content }),
          (err: unknown) => ({ ok: false as const, err: err as InstanceType<typeof OpenAI.APIError> }),
        ),
      ),
    );
    const answered = outcomes.filter((o) => o.ok);
    const refused = outcomes.flatMap((o) => (o.ok ? [] : [o.err]));
    expect(answered.length + refused.length).toBe(TURNS);
    for (const err of refused) {
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      expect({ status: err.status, type: err.type, code: err.code }).toEqual({ status: 429, type: 'insufficient_quota', code: 'BUDGET_EXCEEDED' });
      expect(err.message).toContain('Your monthly budget of $2.00 is used up');
      expect(err.headers?.get('x-should-retry')).toBe('false');
    }

    // The usage table is the record: what the user was charged, and nothing else reached the priced model.
    const rows = (await t.app.db.repo(t.app.systemCtx('test'), UsageRecord).findBy({ userId: member.id })).filter((r) => r.role !== 'embeddings');
    const spent = rows.reduce((sum, r) => sum + (r.costUsd ?? 0), 0);
    expect(rows.every((r) => r.costUsd === CALL_USD)).toBe(true);
    expect(spent).toBeLessThanOrEqual(LIMIT_USD + CALL_USD + 1e-9);
    // Estimates equal real costs here, so the holds admit exactly as many calls as the budget pays for.
    expect(rows).toHaveLength(LIMIT_USD / CALL_USD);
    expect(answered).toHaveLength(rows.length);
    expect(model.chatRequests().filter((r) => lastUserText(r).startsWith('race '))).toHaveLength(rows.length);
    const budget = dataOf(await owner.http<{ user: { budget: { spentMonthUsd: number; monthlyUsd: number } } }, unknown>(
      /* GraphQL */ `query ($id: ID!) { user(id: $id) { budget { spentMonthUsd monthlyUsd } } }`,
      { id: member.id },
    )).user.budget;
    expect(budget).toEqual({ spentMonthUsd: LIMIT_USD, monthlyUsd: LIMIT_USD });

    // Once spent, a request is refused before anything is stored, with the time until the month resets.
    const late = (await api.chat.completions.create({ model: 'muninn', messages: [{ role: 'user', content: 'one more' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(late).toBeInstanceOf(OpenAI.RateLimitError);
    const retryAfter = Number(late.headers?.get('retry-after'));
    const now = new Date();
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((nextMonth - now.getTime()) / 1000) + 1);
    expect(model.chatRequests().filter((r) => lastUserText(r) === 'one more')).toHaveLength(0);
    // Slash commands need no model and still answer.
    const usage = await api.chat.completions.create({ model: 'muninn', messages: [{ role: 'user', content: '/usage' }] });
    expect(usage.choices[0]!.message.content).toContain('this month: $2.00 of $2.00');
    await owner.close();
  });
});
