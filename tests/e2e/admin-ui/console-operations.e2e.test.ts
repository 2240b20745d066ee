import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, FakeReplies } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { launchBrowser, screenshotBoth } from '../../support/browser';
import { newConsolePage, openConsole, signIn } from '../../support/console-page';

const CREATE_MEMORY = /* GraphQL */ `mutation M($input: CreateMemoryInput!) { createMemory(input: $input) { id } }`;
const MEMORIES_OF = /* GraphQL */ `query Q($userId: ID) { memories(first: 5, filter: { userId: $userId }) { totalCount edges { node { content userId } } } }`;
const PROVIDERS = /* GraphQL */ `query { modelProviders { name health probeError lastError recentCalls errorRate } }`;
const REINDEX = /* GraphQL */ `mutation R($userId: ID) { reindexMemories(userId: $userId) { jobId queue } }`;
const SESSION = /* GraphQL */ `query S($id: ID!) { session(id: $id) { id messageCount } }`;
const SERVER_INFO = /* GraphQL */ `query { serverInfo { version uptimeSeconds usingMockModel } }`;

/** Memories of the owner: enough for several re-index steps of 50. */
const OWNER_MEMORIES = 120;

jest.setTimeout(90_000);

/**
 * Issue 28 (second half): providers & models, memory re-index with live progress, memory owners, the
 * overview's health rows and the mock-model banner, in a real Chromium against real servers (SQLite,
 * Redis, BullMQ workers). One provider is a fake model server, the other a fake that refuses our key.
 * Every page is checked with axe-core and saved in light and dark to tests/artifacts/.
 */
describe('console: providers, memories and the overview in a browser', () => {
  let t: TestApp;
  let mockApp: TestApp;
  let good: FakeOpenAIServer;
  let refusing: FakeOpenAIServer;
  let owner: GraphQLTestClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let member: { id: string; token: string };
  const pageErrors: string[] = [];

  beforeAll(async () => {
    good = await FakeOpenAIServer.start();
    good.setDefault(() => FakeReplies.text('OK'));
    // A provider that answers every request with 401: our config sends no key, it wants one.
    refusing = await FakeOpenAIServer.start({ apiKey: 'sk-the-right-key' });
    [t, mockApp, browser] = await Promise.all([
      startTestApp({
        config: {
          ai: {
            providers: {
              fake: { base_url: good.baseUrl, model: 'fake-model' },
              backup: { base_url: refusing.baseUrl, model: 'fake-model' },
            },
            roles: { main: { provider: 'fake', model: 'fake-model', fallbacks: [{ provider: 'backup' }] } },
          },
          session: { summarizer_mode: 'manual' },
          log: { level: 'warn' },
        },
      }),
      // No provider at all: the built-in mock answers (the Ollama probe finds nothing on this port).
      startTestApp({ config: { ai: { providers: {} }, log: { level: 'warn' } }, workers: false }),
      launchBrowser(),
    ]);
    owner = t.client(t.ownerToken);
    member = await createUserWithToken(owner, 'Mia Member', 'MEMBER');
    for (let i = 0; i < OWNER_MEMORIES; i++) dataOf(await owner.http(CREATE_MEMORY, { input: { content: `Owner note number ${i}` } }));
    dataOf(await owner.http(CREATE_MEMORY, { input: { content: 'Mia prefers green tea.', userId: member.id } }));
    ({ context, page } = await newConsolePage(browser, pageErrors, { viewport: { width: 1280, height: 800 }, timeoutMs: 10_000 }));
  }, 90_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await owner?.close();
    await t?.close();
    await mockApp?.close();
    await good?.close();
    await refusing?.close();
  });

  const open = (path: string) => openConsole(page, t.url, path);

  it('GraphQL: the refusing provider is down with its error, the fake one up; members may not see providers', async () => {
    const providers = dataOf(await owner.http<{ modelProviders: Array<{ name: string; health: string; probeError: string | null }> }, unknown>(PROVIDERS)).modelProviders;
    expect(providers.find((p) => p.name === 'fake')).toMatchObject({ health: 'UP', probeError: null });
    expect(providers.find((p) => p.name === 'backup')).toMatchObject({ health: 'DOWN', probeError: expect.stringMatching(/401|API key/i) });
    const m = t.client(member.token);
    expect((await m.http(PROVIDERS)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await m.http(REINDEX, {})).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    // serverInfo is for every signed-in user (the chat page asks it for the mock-model banner).
    expect(dataOf(await m.http<{ serverInfo: { usingMockModel: boolean; version: string } }, unknown>(SERVER_INFO)).serverInfo).toMatchObject({ usingMockModel: false, version: expect.stringMatching(/^\d+\.\d+/) });
    await m.close();
  });

  it('overview: provider health next to database, Redis and every channel; version and uptime', async () => {
    await signIn(page, t.url, t.ownerToken);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const health = page.getByRole('region', { name: 'Health' });
    await health.locator('tr', { hasText: 'model fake' }).getByText('up').waitFor();
    await health.locator('tr', { hasText: 'model backup' }).getByText('down').waitFor();
    for (const channel of ['telegram', 'whatsapp', 'web', 'tui']) await health.getByText(`channel ${channel}`).waitFor();
    await page.getByTestId('server-facts').getByText(new RegExp(`Muninn \\d+\\.\\d+.* · up \\d+ min · Node ${process.versions.node.split('.')[0]}\\b`)).waitFor();
    await screenshotBoth(page, 'overview-providers');
  });

  it('providers & models: the failing provider shows as down with its error; "Test" reports each outcome', async () => {
    await open('/models');
    await page.getByRole('heading', { name: 'Providers & models' }).waitFor();
    const backup = page.getByRole('region', { name: 'backup' });
    await backup.getByText('down', { exact: true }).waitFor();
    await backup.getByText(/Incorrect API key/).first().waitFor();
    await page.getByRole('region', { name: 'fake' }).getByText('up', { exact: true }).waitFor();
    const roles = page.getByRole('table', { name: 'Model roles' });
    const main = roles.locator('tr', { hasText: /^main/ });
    await main.getByText('fake/fake-model').waitFor();
    await main.getByText('backup/fake-model').waitFor();

    await page.getByRole('button', { name: 'Test backup' }).click();
    await backup.getByRole('status').getByText(/Test failed after .*Incorrect API key/).waitFor();
    await page.getByRole('button', { name: 'Test fake' }).click();
    const fake = page.getByRole('region', { name: 'fake' });
    await fake.getByRole('status').getByText(/Test passed in .*“OK”/).waitFor();
    // The test calls count as recent calls: one failure for backup, one success for fake.
    const after = dataOf(await owner.http<{ modelProviders: Array<{ name: string; recentCalls: number; errorRate: number | null; lastError: string | null }> }, unknown>(PROVIDERS)).modelProviders;
    expect(after.find((p) => p.name === 'backup')).toMatchObject({ recentCalls: 1, errorRate: 1, lastError: expect.stringMatching(/API key/) });
    expect(after.find((p) => p.name === 'fake')).toMatchObject({ recentCalls: 1, errorRate: 0 });
    await backup.getByText('100 %').waitFor({ timeout: 20_000 });
    await screenshotBoth(page, 'models');
  });

  it('memories: owners shown, filtered by user, created for another user, paginated', async () => {
    await open('/memories');
    const table = page.getByRole('table', { name: 'Memories' });
    await table.locator('tr', { hasText: 'Owner note number' }).first().getByText('you').waitFor();
    await page.getByText(`${OWNER_MEMORIES + 1} memories · page 1 of 4`).waitFor();
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('page 2 of 4').waitFor();
    await page.getByLabel('Owner').selectOption({ label: 'Mia Member' });
    await table.locator('tr', { hasText: 'Mia prefers green tea.' }).getByText('Mia Member').waitFor();
    await page.getByText('1 memories').waitFor();
    await screenshotBoth(page, 'memories-owners');

    await page.getByRole('button', { name: 'New memory' }).click();
    const form = page.getByRole('form', { name: 'New memory' });
    await form.getByLabel('Content').fill('Mia is allergic to peanuts.');
    await form.getByLabel('For').selectOption({ label: 'Mia Member' });
    await form.getByRole('button', { name: 'Create' }).click();
    await table.locator('tr', { hasText: 'allergic to peanuts' }).getByText('Mia Member').waitFor();
    const mia = dataOf(await owner.http<{ memories: { totalCount: number; edges: Array<{ node: { content: string; userId: string } }> } }, unknown>(MEMORIES_OF, { userId: member.id })).memories;
    expect(mia.totalCount).toBe(2);
    expect(mia.edges.map((e) => e.node.content)).toContain('Mia is allergic to peanuts.');
  });

  it('memories: re-index shows its progress up to 100 %', async () => {
    await open('/memories');
    const bar = page.getByRole('progressbar', { name: 'Re-index progress' });
    // Record every value the bar shows while the job runs.
    await page.evaluate(`(() => {
      window.__seen = [];
      new MutationObserver(() => {
        const bar = document.querySelector('[aria-label="Re-index progress"]');
        if (bar) window.__seen.push(Number(bar.getAttribute('aria-valuenow')));
      }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['aria-valuenow'] });
    })()`);
    await page.getByRole('button', { name: 'Re-index' }).click();
    await page.getByRole('status').getByText(`Done: 100 % — ${OWNER_MEMORIES + 2} memories re-indexed`).waitFor({ timeout: 30_000 });
    expect(await bar.getAttribute('aria-valuenow')).toBe('100');
    const seen = (await page.evaluate('window.__seen')) as number[];
    expect(seen.at(-1)).toBe(100);
    // Never backwards.
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    await screenshotBoth(page, 'memories-reindex');

    // One user's memories only.
    await page.getByLabel('Re-index whose memories').selectOption({ label: "Mia Member's memories" });
    await page.getByRole('button', { name: 'Re-index' }).click();
    await page.getByRole('status').getByText('Done: 100 % — 2 memories re-indexed').waitFor({ timeout: 30_000 });
  });

  it('sessions: titled by their first message; "Compact now" says what happened; a session can be deleted', async () => {
    const first = await send(owner, 'Plan the   garden party\nfor Saturday');
    await eventually(async () => dataOf(await owner.http<{ session: { messageCount: number } }, unknown>(SESSION, { id: first.sessionId })).session.messageCount >= 2 || undefined);
    await open('/sessions');
    await page.getByRole('link', { name: 'Plan the garden party for Saturday' }).click();
    await page.getByRole('heading', { name: 'Plan the garden party for Saturday' }).waitFor();
    await page.getByRole('button', { name: 'Compact now' }).click();
    await page.getByRole('status').getByText(/Compacted: the conversation goes on in this session/).waitFor({ timeout: 20_000 });
    await screenshotBoth(page, 'session-compacted');
    // The earlier (archived) session is linked from the notice; delete it.
    await page.getByRole('link', { name: 'the earlier session' }).click();
    await page.getByRole('heading', { name: 'Plan the garden party for Saturday' }).waitFor();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete this session?' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    await eventually(async () => ((await owner.http(SESSION, { id: first.sessionId })).errors?.[0]?.extensions?.code === 'NOT_FOUND') || undefined);
  });

  it('users: a new user gets a trust level at once, is renamed and gets a Telegram identity linked', async () => {
    await open('/users');
    await page.getByLabel("New user's name").fill('Tess Trusted');
    await page.getByLabel("New user's trust").selectOption('TRUSTED');
    await page.getByRole('button', { name: 'Add user' }).click();
    const row = page.locator('tr[data-user="Tess Trusted"]');
    await row.getByLabel('Trust of Tess Trusted').waitFor();
    expect(await row.getByLabel('Trust of Tess Trusted').inputValue()).toBe('TRUSTED');

    await row.getByRole('button', { name: 'Rename' }).click();
    const rename = page.getByRole('dialog', { name: 'Rename Tess Trusted' });
    await rename.getByLabel('Display name').fill('Tess T.');
    await rename.getByRole('button', { name: 'Save' }).click();
    const renamed = page.locator('tr[data-user="Tess T."]');
    await renamed.waitFor();

    await renamed.getByRole('button', { name: 'Link identity' }).click();
    const link = page.getByRole('dialog', { name: 'Link an identity to Tess T.' });
    await link.getByLabel('Channel').selectOption('telegram');
    await link.getByLabel('Handle').fill('5550001');
    await link.getByRole('button', { name: 'Link' }).click();
    await renamed.getByText('telegram:5550001').waitFor();
    await screenshotBoth(page, 'users-actions');
    // A handle that is already linked is refused with the server's reason.
    await page.locator('tr[data-user="Mia Member"]').getByRole('button', { name: 'Link identity' }).click();
    const again = page.getByRole('dialog', { name: 'Link an identity to Mia Member' });
    await again.getByLabel('Handle').fill('5550001');
    await again.getByRole('button', { name: 'Link' }).click();
    await again.getByRole('alert').waitFor();
    await again.getByRole('button', { name: 'Cancel' }).click();
  });

  it('chat: a slash command\'s answer is still there after a reload', async () => {
    await open('/chat');
    await page.getByLabel('Message').fill('/whoami');
    await page.getByLabel('Message').press('Enter');
    await page.locator('.bubble.system', { hasText: 'Trust: OWNER' }).waitFor();
    await page.reload();
    await page.getByRole('log', { name: 'Transcript' }).waitFor();
    await page.locator('.bubble.system', { hasText: 'Trust: OWNER' }).waitFor();
    await page.locator('.bubble.user', { hasText: '/whoami' }).waitFor();
  });

  it('audit log: details read as words, not raw JSON', async () => {
    await open('/audit');
    const table = page.getByRole('table', { name: 'Audit log' });
    await table.locator('tbody tr').first().waitFor();
    expect(await table.textContent()).not.toContain('{"');
    await screenshotBoth(page, 'audit-details');
  });

  it('the queue page offers the memory queue', async () => {
    await open('/queues');
    await page.locator('option', { hasText: /^memory$/ }).first().waitFor({ state: 'attached' });
  });

  it('with no model configured, chat and the providers page say so and how to set one', async () => {
    const { context: mockContext, page: p } = await newConsolePage(browser, pageErrors, { viewport: { width: 1280, height: 800 }, timeoutMs: 10_000 });
    try {
      await signIn(p, mockApp.url, mockApp.ownerToken);
      await p.goto(`${mockApp.url}/admin/chat`);
      const banner = p.getByRole('note', { name: 'No model configured' });
      await banner.getByText('MUNINN_MODEL_BASE_URL').waitFor();
      await screenshotBoth(p, 'chat-mock-banner');
      await p.goto(`${mockApp.url}/admin/models`);
      await p.getByRole('region', { name: 'mock' }).getByText('up', { exact: true }).waitFor();
      await p.getByRole('note', { name: 'No model configured' }).waitFor();
      await p.goto(`${mockApp.url}/admin/`);
      await p.getByRole('region', { name: 'Health' }).getByText('no model configured').waitFor();
    } finally {
      await mockContext.close();
    }
  });

  it('phone: the chat composer and Send button are on screen; the overview\'s queue table scrolls inside its card', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await open('/chat');
      const send = page.getByRole('button', { name: 'Send' });
      await send.waitFor();
      const box = (await send.boundingBox())!;
      expect(box.y + box.height).toBeLessThanOrEqual(844);
      const input = (await page.getByLabel('Message').boundingBox())!;
      expect(input.y + input.height).toBeLessThanOrEqual(844);
      await screenshotBoth(page, 'chat-phone-composer');
      await open('/');
      const queues = page.getByRole('table', { name: 'Queue depths' });
      await queues.waitFor();
      // The page itself does not scroll sideways.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await screenshotBoth(page, 'overview-phone');
      await open('/models');
      await page.getByRole('region', { name: 'backup' }).waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await screenshotBoth(page, 'models-phone');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('no page threw an uncaught error', () => {
    expect(pageErrors).toEqual([]);
  });
});
