/**
 * Issue 25, acceptance 5 (console): the Usage page in a real Chromium against a real server whose fake
 * model reports usage. Before any call the charts say there is nothing to show (no empty axes); after two
 * turns of a MEMBER ($0.20 each) it shows the cost per day, user and model, and the Budgets table shows
 * the MEMBER's trust default and spending, which the OWNER edits in place (saved with setUserBudget, then
 * back to the default). Each state is saved in light and dark and checked with axe-core.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, FakeReplies } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { launchBrowser, screenshotBoth } from '../../support/browser';
import { newConsolePage, signIn } from '../../support/console-page';
import { UsageRecord } from '../../../server/modules/usage';

jest.setTimeout(120_000);

const BUDGET = /* GraphQL */ `query ($id: ID!) { user(id: $id) { budget { dailyUsd monthlyUsd custom } } }`;

describe('console: Usage page with cost and budgets', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let owner: GraphQLTestClient;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    model = await FakeOpenAIServer.start({ models: ['fake-model', 'fake-embed'] });
    model.setDefault(() => FakeReplies.text('Noted.', { usage: { prompt_tokens: 100, completion_tokens: 100 } }));
    [t, browser] = await Promise.all([
      startTestApp({
        config: {
          ai: {
            providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } },
            roles: { embeddings: { provider: 'fake', model: 'fake-embed' } },
          },
          pricing: { 'fake/fake-model': { input_per_mtok: 1000, output_per_mtok: 1000 } },
          budgets: { defaults: { MEMBER: { daily_usd: 1, monthly_usd: 10 } }, max_output_tokens: 200 },
          session: { summarizer_mode: 'manual' },
          log: { level: 'warn' },
        },
      }),
      launchBrowser(),
    ]);
    owner = t.client(t.ownerToken);
    ({ context, page } = await newConsolePage(browser, pageErrors, { viewport: { width: 1280, height: 900 }, timeoutMs: 15_000 }));
    await signIn(page, t.url, t.ownerToken);
  }, 120_000);
  afterAll(async () => {
    await owner?.close();
    await context?.close();
    await browser?.close();
    await t?.close();
    await model?.close();
  });

  it('with no calls yet the charts say so instead of drawing empty axes', async () => {
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    await page.getByText('No usage in this period').waitFor();
    await page.getByRole('img', { name: 'Cost in USD: No cost in this period.' }).waitFor();
    await page.getByRole('img', { name: 'Tokens: No tokens in this period.' }).waitFor();
    expect(await page.locator('.chart svg').count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Details' }).count()).toBe(0);
    // The budgets table is there from the start: the owner is unlimited.
    const budgets = page.getByRole('table', { name: 'Budgets' });
    await budgets.locator('tr', { hasText: 'OWNER' }).getByText('unlimited').waitFor();
    await screenshotBoth(page, 'usage-empty');
    expect(pageErrors).toEqual([]);
  });

  it('shows cost per day, user and model, and the OWNER edits a MEMBER budget in place', async () => {
    const member = await createUserWithToken(owner, 'Ada Budget', 'MEMBER');
    const c = t.client(member.token);
    await send(c, 'first priced turn');
    await eventually(async () => ((await t.app.db.repo(t.app.systemCtx('test'), UsageRecord).countBy({ userId: member.id, model: 'fake-model' })) >= 1) || undefined);
    await send(c, 'second priced turn');
    await eventually(async () => ((await t.app.db.repo(t.app.systemCtx('test'), UsageRecord).countBy({ userId: member.id, model: 'fake-model' })) >= 2) || undefined);
    await c.close();

    await page.reload();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    // By day: the cost chart has a bar, and its card title the period's total.
    await page.getByRole('img', { name: 'Cost in USD', exact: true }).locator('rect').first().waitFor();
    await page.getByRole('heading', { name: 'Cost · $0.40' }).waitFor();

    // By model and by user: the details table carries the cost.
    await page.getByLabel('Group by').selectOption('MODEL');
    await page.locator('tr', { hasText: 'fake/fake-model' }).getByRole('cell', { name: '$0.40' }).waitFor();
    await page.getByLabel('Group by').selectOption('USER');
    await page.locator('tr', { hasText: 'Ada Budget' }).getByRole('cell', { name: '$0.40' }).first().waitFor();

    // Budgets: the MEMBER default and what was spent, then a limit of their own.
    const row = page.getByRole('table', { name: 'Budgets' }).locator('tr', { hasText: 'Ada Budget' });
    await row.getByText('$1.00 a day · $10.00 a month').waitFor();
    await row.getByText('(MEMBER default)').waitFor();
    await row.getByText('$0.40 of $1.00').waitFor();
    await screenshotBoth(page, 'usage-cost');

    await row.getByRole('button', { name: 'Edit budget of Ada Budget' }).click();
    const form = page.getByRole('form', { name: 'Budget of Ada Budget' });
    await form.getByLabel('Daily limit (USD)').fill('-3');
    await form.getByRole('button', { name: 'Save budget' }).click();
    await form.getByText('Limits are amounts in USD of 0 or more').waitFor();
    await form.getByLabel('Daily limit (USD)').fill('0.5');
    await form.getByLabel('Monthly limit (USD)').fill('');
    // Correcting the field drops the complaint.
    expect(await form.getByText('Limits are amounts in USD of 0 or more').count()).toBe(0);
    await screenshotBoth(page, 'usage-budget-edit');
    await form.getByRole('button', { name: 'Save budget' }).click();
    await row.getByText('$0.50 a day').waitFor();
    await row.getByText('(set for this user)').waitFor();
    await row.getByText('$0.40 of $0.50').waitFor();
    expect(dataOf(await owner.http<{ user: { budget: unknown } }, unknown>(BUDGET, { id: member.id })).user.budget).toEqual({ dailyUsd: 0.5, monthlyUsd: null, custom: true });

    // Back to the trust default.
    await row.getByRole('button', { name: 'Edit budget of Ada Budget' }).click();
    await form.getByRole('button', { name: 'Use the trust default' }).click();
    await row.getByText('(MEMBER default)').waitFor();
    expect(dataOf(await owner.http<{ user: { budget: unknown } }, unknown>(BUDGET, { id: member.id })).user.budget).toEqual({ dailyUsd: 1, monthlyUsd: 10, custom: false });
    expect(pageErrors).toEqual([]);
  });
});
