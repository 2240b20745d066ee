import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, FakeReplies, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { lastUserText } from '../../support/model-requests';
import { FakeTelegramServer } from '../../support/fakes/fake-telegram-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { launchBrowser, screenshotBoth } from '../../support/browser';
import { newConsolePage, openConsole, signIn } from '../../support/console-page';
import { newBotToken } from '../telegram/telegram-kit';

const run = promisify(execFile);
jest.setTimeout(60_000);

const AUDIT = /* GraphQL */ `query { auditLog(first: 20, filter: { action: "identity.self_link" }) { edges { node { action actorUserId details } } } }`;
const USER = /* GraphQL */ `query U($id: ID!) { user(id: $id) { identities { key } } }`;

const SKILL_MARK = 'Read the barometer before answering about weather';

function systemPrompt(req: RecordedRequest | undefined): string {
  const content = req?.body?.messages?.find((m) => m.role === 'system')?.content;
  return typeof content === 'string' ? content : '';
}

/**
 * Issue 28 (first half): the beats, skills, webhooks and account pages in a real Chromium against a real
 * server (SQLite or PostgreSQL, Redis, BullMQ workers) with the fake model and a fake Telegram Bot API.
 * Each page is saved to tests/artifacts/ in light and dark, and checked there with axe-core (screenshotBoth).
 */
describe('console pages: beats, skills, webhooks, account', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let tg: FakeTelegramServer;
  let owner: GraphQLTestClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let member: { id: string; token: string };
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const botToken = newBotToken();
    [model, tg] = await Promise.all([FakeOpenAIServer.start(), FakeTelegramServer.start({ token: botToken })]);
    // A beat's task is answered slowly, so its run is seen RUNNING before it is OK.
    model.setDefault((req) => {
      const text = lastUserText(req);
      if (text.includes('morning digest')) return FakeReplies.text('Digest: three meetings, sunny, no urgent mail.', { chunks: 6, chunkDelayMs: 250 });
      return FakeReplies.text(`Noted: ${text.slice(0, 60)}`);
    });
    [t, browser] = await Promise.all([
      startTestApp({
        config: {
          ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 2 } } },
          channels: { telegram: { enabled: true, bot_token: botToken, api_root: tg.url } },
          session: { summarizer_mode: 'manual' },
          log: { level: 'warn' },
        },
      }),
      launchBrowser(),
    ]);
    const skillDir = path.join(t.config.skills.dir, 'weather');
    mkdirSync(skillDir, { recursive: true });
    writeFileSync(
      path.join(skillDir, 'SKILL.md'),
      [
        '---',
        'description: How to answer questions about the weather',
        'read_when: the user asks about weather or what to wear',
        'min_trust: MEMBER',
        'channels: [web, telegram]',
        '---',
        '## Steps',
        '',
        `1. ${SKILL_MARK}.`,
        '2. Say **which city** you mean and give `°C`.',
        '',
        'Raw HTML stays text: <img src=x onerror="window.__pwned=1"> and [a link](javascript:alert(1)).',
      ].join('\n'),
    );
    owner = t.client(t.ownerToken);
    member = await createUserWithToken(owner, 'Mia Member', 'MEMBER');
    // The owner's web chat exists (a beat delivers there).
    await send(owner, 'good morning');
    ({ context, page } = await newConsolePage(browser, pageErrors, { viewport: { width: 1280, height: 860 }, timeoutMs: 10_000 }));
    await signIn(page, t.url, t.ownerToken, { heading: 'Overview' });
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await owner?.close();
    await t?.close();
    await Promise.all([model?.close(), tg?.close()]);
  });

  const open = (p: Page, to: string) => openConsole(p, t.url, to);

  it('beats: a bad cron is explained, a good one previews five runs in its time zone, the beat is created', async () => {
    await open(page, '/beats');
    // The managed beat from heartbeats.default.json is listed, read-only.
    const managed = page.locator('tr[data-beat="__clear_images__"]');
    await managed.getByText('managed').waitFor();
    expect(await managed.getByRole('switch').isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'New beat' }).click();
    const form = page.getByRole('form', { name: 'New beat' });
    await form.getByLabel('Name').fill('morning digest');
    await form.getByRole('textbox', { name: 'Instruction' }).fill('Write my morning digest.');
    await form.getByLabel('Time zone').fill('Europe/Berlin');
    // Delivered to the owner's web chat (the chat id of a web chat is the user's id, filled in).
    await form.getByLabel('Channel').selectOption('web');
    expect(await form.getByLabel('Chat id').inputValue()).toMatch(/^[0-9a-f-]{36}$/);
    await form.getByLabel('Cron expression').fill('61 7 * * *');
    const error = page.getByTestId('cron-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/Invalid cron expression "61 7 \* \* \*".*minute hour day-of-month month day-of-week/);
    expect(await form.getByRole('button', { name: 'Create beat' }).isDisabled()).toBe(true);
    await screenshotBoth(page, 'beat-cron-error');

    await form.getByLabel('Cron expression').fill('30 7 * * 1-5');
    const runs = page.getByRole('list', { name: 'Next five runs' });
    await runs.waitFor();
    await page.getByTestId('cron-preview').getByText('At 07:30, Monday through Friday').waitFor();
    const items = await runs.getByRole('listitem').allTextContents();
    expect(items).toHaveLength(5);
    // Shown in the beat's zone: 07:30 local Berlin time, on weekdays only.
    for (const item of items) {
      expect(item).toContain('07:30');
      expect(item).not.toMatch(/Sat|Sun/);
    }
    await screenshotBoth(page, 'beat-form');
    await form.getByRole('button', { name: 'Create beat' }).click();
    await page.getByRole('heading', { name: 'morning digest' }).waitFor();
  });

  it('beats: run now shows the run live (running, then its output) with a link to its cron: session', async () => {
    await page.getByRole('button', { name: 'Run now' }).click();
    const runsTable = page.getByRole('table', { name: 'Runs' });
    // RUNNING arrives through the beatRuns subscription while the task is still being written.
    await runsTable.getByText('RUNNING', { exact: true }).waitFor();
    await runsTable.getByText('Digest: three meetings, sunny, no urgent mail.').waitFor({ timeout: 20_000 });
    await runsTable.getByText('OK', { exact: true }).waitFor();
    const sessionLink = runsTable.getByRole('link', { name: /^cron:/ });
    await screenshotBoth(page, 'beat-detail');
    await sessionLink.click();
    await page.getByText('Transcript').waitFor();
    await page.getByText(/^cron:/).first().waitFor();

    await open(page, '/beats');
    const row = page.locator('tr[data-beat="morning digest"]');
    await row.getByText('OK').waitFor();
    await row.getByText('At 07:30, Monday through Friday').waitFor();
    await row.getByText('Europe/Berlin').waitFor();
    await screenshotBoth(page, 'beats');
    // Disable from the list.
    await row.getByRole('switch', { name: 'morning digest enabled' }).click();
    await eventually(async () => (await row.getByRole('switch').getAttribute('aria-checked')) === 'false' || undefined);
    await page.setViewportSize({ width: 390, height: 844 });
    await open(page, '/beats');
    await page.getByRole('button', { name: /Menu/ }).waitFor();
    await screenshotBoth(page, 'beats-phone');
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('skills: listed with its file, rendered safely, and switching it off takes it out of the next prompt', async () => {
    await open(page, '/skills');
    await page.getByRole('button', { name: 'Sync now' }).click();
    await page.getByTestId('sync-result').getByText(/Synced: \d+ added/).waitFor();
    const row = page.locator('tr[data-skill="weather"]');
    await row.getByText('How to answer questions about the weather').waitFor();
    await row.getByText(path.join(t.config.skills.dir, 'weather', 'SKILL.md')).waitFor();
    await row.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByRole('region', { name: 'Preview of weather' });
    await preview.getByRole('heading', { name: 'Steps' }).waitFor();
    await preview.locator('strong', { hasText: 'which city' }).waitFor();
    // The HTML in the file is text, and a javascript: link is not a link.
    expect(await preview.locator('img').count()).toBe(0);
    await preview.getByText('<img src=x onerror="window.__pwned=1">', { exact: false }).waitFor();
    expect(await preview.getByRole('link').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    await screenshotBoth(page, 'skills');

    const promptOf = async (text: string) => {
      await send(owner, text);
      return systemPrompt(await eventually(() => model.chatRequests().find((r) => lastUserText(r).includes(text)), 15_000, text));
    };
    expect(await promptOf('what is the weather like? #1')).toContain(SKILL_MARK);
    await row.getByRole('switch', { name: 'weather enabled' }).click();
    await eventually(async () => (await row.getByRole('switch').getAttribute('aria-checked')) === 'false' || undefined);
    expect(await promptOf('and tomorrow? #2')).not.toContain(SKILL_MARK);
  });

  it('webhooks: created with a secret shown once, the shown curl example delivers, the delivery is listed', async () => {
    await open(page, '/webhooks');
    await page.getByText('No webhooks yet').waitFor();
    await page.getByRole('button', { name: 'New webhook' }).click();
    const form = page.getByRole('form', { name: 'New webhook' });
    await form.getByLabel(/^Name/).fill('ci-results');
    await form.getByLabel('Instructions for each call').fill('Say whether the build passed.');
    await form.getByRole('button', { name: 'Create webhook' }).click();
    const secret = ((await page.getByTestId('webhook-secret').textContent()) ?? '').trim();
    expect(secret.length).toBeGreaterThan(20);
    const example = (await page.getByTestId('curl-example').textContent()) ?? '';
    expect(example).toContain(`${t.url}/hooks/ci-results`);
    expect(example).toContain(secret);
    await screenshotBoth(page, 'webhook-created');
    // Run the example exactly as shown.
    const { stdout } = await run('bash', ['-c', `${example} -w '\\n%{http_code}'`], { timeout: 15_000 });
    expect(stdout.trim().split('\n').at(-1)).toBe('202');
    await page.getByRole('button', { name: 'Done' }).click();
    const deliveries = page.getByRole('table', { name: 'Deliveries of ci-results' });
    await deliveries.getByText('DONE').waitFor({ timeout: 20_000 });
    await deliveries.getByRole('link', { name: /^turn / }).waitFor();
    await screenshotBoth(page, 'webhooks');

    // Rotating: the old secret is refused, the new one works; disabled hooks refuse too.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
    const fresh = ((await page.getByTestId('webhook-secret').textContent()) ?? '').trim();
    expect(fresh).not.toBe(secret);
    const post = (s: string) => fetch(`${t.url}/hooks/ci-results`, { method: 'POST', headers: { authorization: `Bearer ${s}`, 'content-type': 'application/json' }, body: '{}' });
    expect((await post(secret)).status).toBe(401);
    expect((await post(fresh)).status).toBe(202);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('switch', { name: 'ci-results enabled' }).click();
    await eventually(async () => (await page.getByRole('switch', { name: 'ci-results enabled' }).getAttribute('aria-checked')) === 'false' || undefined);
    expect((await post(fresh)).status).toBe(401);
  });

  it('a MEMBER links their Telegram account with /link CODE, makes a token and sees their beats', async () => {
    const memberContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const m = await memberContext.newPage();
      m.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));
      await signIn(m, t.url, member.token, { heading: 'Chat' });
      expect(await m.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).toEqual(['Chat', 'Sessions', 'Memories', 'Documents', 'Beats', 'MCP servers', 'Account']);

      await open(m, '/beats');
      await m.getByText('Creating and changing beats needs TRUSTED trust').waitFor();
      await m.getByText('No beats yet').waitFor();
      expect(await m.getByRole('button', { name: 'New beat' }).count()).toBe(0);
      await screenshotBoth(m, 'beats-member');

      await open(m, '/account');
      await m.getByTestId('base-url').getByText(`${t.url}/v1`).waitFor();
      await m.getByLabel('Token name').fill('laptop');
      await m.getByRole('button', { name: 'Create token' }).click();
      const token = ((await m.getByTestId('my-new-token').textContent()) ?? '').trim();
      expect(token).toMatch(/^mun_/);
      await m.getByRole('region', { name: 'Use the API' }).getByText(`baseURL: '${t.url}/v1'`, { exact: false }).waitFor();
      await m.getByLabel('curl').getByText(`${t.url}/v1/chat/completions`, { exact: false }).waitFor();
      await m.getByLabel('curl').getByText(token, { exact: false }).waitFor();

      // A stranger's /link with a wrong code links nothing.
      tg.pushMessage({ chatId: 4711, from: { id: 4711, first_name: 'Mia' }, text: '/link ZZZZ2222' });
      await tg.waitForSent(4711, 1);
      expect(tg.sentTo(4711)[0]!.text).toMatch(/unknown or expired/);

      await m.getByRole('button', { name: 'Link Telegram or WhatsApp' }).click();
      const command = ((await m.getByTestId('link-command').textContent()) ?? '').trim();
      expect(command).toMatch(/^\/link [A-Z2-9]{8}$/);
      await screenshotBoth(m, 'account');
      tg.pushMessage({ chatId: 4711, from: { id: 4711, first_name: 'Mia' }, text: command });
      await tg.waitForSent(4711, 2);
      expect(tg.sentTo(4711)[1]!.text).toContain('Linked: this telegram account now belongs to Mia Member');
      await m.getByRole('status').getByText('Linked telegram:4711 to you.').waitFor();
      await m.getByRole('list', { name: 'Your identities' }).getByText('4711').waitFor();
      const identities = dataOf(await owner.http<{ user: { identities: Array<{ key: string }> } }, unknown>(USER, { id: member.id })).user.identities.map((i) => i.key);
      expect(identities).toContain('telegram:4711');
      const audit = dataOf(await owner.http<{ auditLog: { edges: Array<{ node: { actorUserId: string; details: { identity: string } } }> } }, unknown>(AUDIT)).auditLog.edges;
      expect(audit.map((e) => [e.node.actorUserId, e.node.details.identity])).toContainEqual([member.id, 'telegram:4711']);
      // The code worked once: sent again it is refused.
      tg.pushMessage({ chatId: 4711, from: { id: 4711, first_name: 'Mia' }, text: command });
      await tg.waitForSent(4711, 3);
      expect(tg.sentTo(4711)[2]!.text).toMatch(/unknown or expired/);
      // Messages from there are now the member's.
      tg.pushMessage({ chatId: 4711, from: { id: 4711, first_name: 'Mia' }, text: 'hello from telegram' });
      await tg.waitFor(() => tg.sentTo(4711).some((s) => s.text.includes('Noted: hello from telegram')), 'the answer on telegram');
      await screenshotBoth(m, 'account-linked');
    } finally {
      await memberContext.close();
    }
  });

  it('no page threw an uncaught error', () => {
    expect(pageErrors).toEqual([]);
  });
});
