import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, FakeReplies } from '../../support/fakes/fake-openai-server';
import { lastUserText } from '../../support/model-requests';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { launchBrowser, screenshotBoth } from '../../support/browser';
import { newConsolePage, openConsole, signIn } from '../../support/console-page';
import { Ctx } from '../../../server/common/ctx';
import { PairingService } from '../../../server/modules/pairing';

const USER = /* GraphQL */ `query U($id: ID!) { user(id: $id) { id displayName trust } }`;
const USERS = /* GraphQL */ `query { users { edges { node { id } } } }`;
const SESSION = /* GraphQL */ `query S($id: ID!) { session(id: $id) { id key } }`;
const SETTINGS = /* GraphQL */ `query { pluginSettings { plugin channel enabled } }`;
const FAILED = /* GraphQL */ `query { queues { name jobs(state: FAILED) { id failedReason } } }`;
const CREATE_MEMORY = /* GraphQL */ `mutation M($content: String!) { createMemory(input: { content: $content }) { id } }`;

jest.setTimeout(120_000);

/**
 * Issue 10, acceptance 1 and 2: the admin console in a real Chromium against a real server (SQLite,
 * Redis, BullMQ workers) with the fake model. Every page is saved in light and dark to tests/artifacts/.
 */
describe('admin console in a browser', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let owner: GraphQLTestClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let member: { id: string; token: string };
  /** Uncaught errors in the page; none may happen. */
  const pageErrors: string[] = [];

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    // "run <word>" asks for `shell echo <word>` (approval required); otherwise a slowly streamed answer.
    model.setDefault((req) => {
      const last = (req.body?.messages ?? []).at(-1);
      if (last?.role === 'tool') return FakeReplies.text(`tool said: ${String(last.content).trim()}`);
      const word = /^run (\S+)$/.exec(lastUserText(req))?.[1];
      if (word) return FakeReplies.toolCalls([{ id: `call_${word}`, name: 'shell', arguments: { argv: ['echo', word] } }]);
      return FakeReplies.text(`You said: ${lastUserText(req)}. This answer arrives in small pieces.`, { chunks: 12, chunkDelayMs: 150 });
    });
    [t, browser] = await Promise.all([
      startTestApp({
        config: {
          ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 2 } } },
          tools: { shell: { enabled: true, allow: ['echo'] } },
          session: { summarizer_mode: 'manual' },
          log: { level: 'warn' },
        },
      }),
      launchBrowser(),
    ]);
    owner = t.client(t.ownerToken);
    member = await createUserWithToken(owner, 'Mia Member', 'MEMBER');
    ({ context, page } = await newConsolePage(browser, pageErrors, { viewport: { width: 1280, height: 800 }, timeoutMs: 10_000 }));
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await owner?.close();
    await t?.close();
    await model?.close();
  });

  const open = (path: string) => openConsole(page, t.url, path);

  it('serves the app with security headers and answers deep links with the app shell', async () => {
    const res = await fetch(`${t.url}/admin/users`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toContain('<div id="root">');
    expect((await fetch(`${t.url}/admin/assets/nope.js`)).status).toBe(404);
  });

  it('signs in with an API token (a wrong one is refused) and shows the overview', async () => {
    await page.goto(`${t.url}/admin/`);
    await page.getByLabel('API token').waitFor();
    await screenshotBoth(page, 'sign-in');
    await page.getByLabel('API token').fill('mun_wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('not valid').waitFor();
    await page.getByLabel('API token').fill(t.ownerToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('table', { name: 'Queue depths' }).getByText('model-calls.fake').waitFor();
    await page.getByText('database').waitFor();
    await screenshotBoth(page, 'overview');
    // The token survives a reload (session storage) …
    await page.reload();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  });

  it('chat: the reply streams in, slash commands answer at once', async () => {
    await open('/chat');
    await page.getByLabel('Message').fill('/whoami');
    await page.getByLabel('Message').press('Enter');
    await page.locator('.bubble.system', { hasText: 'Trust: OWNER' }).waitFor();
    await page.getByLabel('Message').fill('hello there');
    await page.getByRole('button', { name: 'Send' }).click();
    // Part of the answer is on screen while the rest is still being written.
    const streaming = page.getByTestId('streaming');
    await streaming.waitFor();
    await eventually(async () => ((await streaming.textContent()) ?? '').length > 0 || undefined, 10_000, 'first delta');
    const partial = (await streaming.textContent()) ?? '';
    expect('You said: hello there. This answer arrives in small pieces.'.startsWith(partial)).toBe(true);
    expect(partial.length).toBeLessThan('You said: hello there. This answer arrives in small pieces.'.length);
    await page.locator('.bubble:not(.streaming)', { hasText: 'This answer arrives in small pieces.' }).waitFor();
    await expect(streaming.count()).resolves.toBe(0);
    await screenshotBoth(page, 'chat');
  });

  it('chat: a tool call that needs approval is approved inline and the turn goes on', async () => {
    await open('/chat');
    await page.getByLabel('Message').fill('run sunshine');
    await page.getByLabel('Message').press('Enter');
    const approval = page.getByRole('group', { name: 'Tool approval' }).last();
    await approval.waitFor();
    await screenshotBoth(page, 'chat-approval');
    await approval.getByRole('button', { name: 'Allow once' }).click();
    await approval.getByText('Decided: ALLOWED_ONCE').waitFor();
    await page.locator('.bubble', { hasText: /tool said: .*sunshine/ }).waitFor();
    await page.locator('.tool-line', { hasText: 'shell' }).first().waitFor();
  });

  it('approvals page: a pending approval is decided there too (deny)', async () => {
    await send(owner, 'run moonlight');
    await open('/approvals');
    const row = page.locator('tr', { hasText: 'moonlight' });
    await row.waitFor();
    await screenshotBoth(page, 'approvals');
    await row.getByRole('button', { name: 'Deny' }).click();
    await row.waitFor({ state: 'detached' });
  });

  it('users: trust change within the rights, pairing approval, a token shown once', async () => {
    const pairing = new PairingService(t.app.db, t.app.services.audit, t.app.services.users, null);
    const outcome = await pairing.request(new Ctx({ actor: { kind: 'anonymous' }, logger: t.app.logger }), { channel: 'telegram', handle: '4242', displayName: 'Pat Pending' });
    if (outcome.kind !== 'created') throw new Error(outcome.kind);
    await open('/users');
    await page.getByRole('table', { name: 'Pending pairing requests' }).getByText(outcome.request.code).waitFor();
    await page.getByLabel('Trust of Mia Member').waitFor();
    await screenshotBoth(page, 'users');

    await page.getByLabel('Trust of Mia Member').selectOption('TRUSTED');
    await eventually(async () => dataOf(await owner.http<{ user: { trust: string } }, unknown>(USER, { id: member.id })).user.trust === 'TRUSTED' || undefined);
    await page.getByLabel('Trust of Mia Member').selectOption('MEMBER');
    await eventually(async () => dataOf(await owner.http<{ user: { trust: string } }, unknown>(USER, { id: member.id })).user.trust === 'MEMBER' || undefined);

    await page.getByRole('button', { name: `Approve ${outcome.request.code}` }).click();
    await page.getByText('No pending requests').waitFor();
    await page.locator('tr[data-user="Pat Pending"]', { hasText: 'telegram:4242' }).waitFor();

    await page.locator('tr[data-user="Mia Member"]').getByRole('button', { name: 'Tokens' }).click();
    await page.getByLabel('Token name').fill('phone');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.getByTestId('new-token').textContent())!.trim();
    expect(secret).toMatch(/^mun_/);
    const viaNew = t.client(secret);
    expect(dataOf(await viaNew.http<{ user: { id: string } }, unknown>(USER, { id: member.id })).user.id).toBe(member.id);
    await viaNew.close();
    await page.getByRole('button', { name: 'Done' }).click();
    await expect(page.getByTestId('new-token').count()).resolves.toBe(0);
  });

  it('memories: hybrid search finds a memory', async () => {
    dataOf(await owner.http(CREATE_MEMORY, { content: 'The spare house key is under the blue flowerpot.' }));
    dataOf(await owner.http(CREATE_MEMORY, { content: 'Dentist appointment on Friday.' }));
    await open('/memories');
    await page.getByRole('table', { name: 'Memories' }).getByText('Dentist appointment').first().waitFor();
    await screenshotBoth(page, 'memories');
    await page.getByLabel('Search memories').fill('where is the house key');
    await page.getByRole('button', { name: 'Search' }).click();
    const results = page.getByRole('table', { name: 'Search results' });
    await results.getByText('blue flowerpot').first().waitFor();
    // Best hit first, with its score.
    expect(await results.locator('tbody > tr').first().textContent()).toContain('blue flowerpot');
  });

  it('tools & channels: a switch of the matrix turns a tool off on one channel', async () => {
    await open('/tools');
    const toggle = page.getByRole('switch', { name: 'current_time on telegram' });
    await toggle.waitFor();
    await screenshotBoth(page, 'tools');
    expect(await toggle.getAttribute('aria-checked')).toBe('true');
    await toggle.click();
    await eventually(async () => (await toggle.getAttribute('aria-checked')) === 'false' || undefined);
    const settings = dataOf(await owner.http<{ pluginSettings: Array<{ plugin: string; channel: string | null; enabled: boolean }> }, unknown>(SETTINGS)).pluginSettings;
    expect(settings).toContainEqual({ plugin: 'current_time', channel: 'telegram', enabled: false });
  });

  it('queues: a failed job is shown with its reason and retried', async () => {
    model.enqueue({ error: { status: 400, message: 'the model refused this one' } });
    await send(owner, 'this will fail');
    await open('/queues');
    const row = page.locator('tr', { hasText: 'the model refused this one' });
    await row.waitFor();
    await screenshotBoth(page, 'queues');
    const id = await row.getAttribute('data-job');
    await row.getByRole('button', { name: 'Retry' }).click();
    await row.waitFor({ state: 'detached' });
    const failed = dataOf(await owner.http<{ queues: Array<{ jobs: Array<{ id: string }> }> }, unknown>(FAILED)).queues.flatMap((q) => q.jobs);
    expect(failed.map((j) => j.id)).not.toContain(id);
  });

  it('sessions, usage and audit log pages show their data', async () => {
    await open('/sessions');
    // Sessions are titled by their first message; the key is shown under it.
    await page.locator('tr', { hasText: 'web:' }).first().getByRole('link', { name: /^(\/whoami|hello there)$/ }).click();
    await page.getByText('Transcript').waitFor();
    await page.getByText('hello there').first().waitFor();
    await screenshotBoth(page, 'session-detail');
    await open('/sessions');
    await page.locator('tr', { hasText: 'web:' }).first().getByRole('link').waitFor();
    await screenshotBoth(page, 'sessions');
    await open('/usage');
    await page.getByRole('img', { name: 'Tokens' }).waitFor();
    await screenshotBoth(page, 'usage');
    await open('/audit');
    await page.getByRole('table', { name: 'Audit log' }).getByText('user.trust.set').first().waitFor();
    await screenshotBoth(page, 'audit');
    // The overview once there is traffic (the README shows this one).
    await open('/');
    await page.getByRole('table', { name: 'Queue depths' }).waitFor();
    await page.getByRole('img', { name: 'Tokens per day' }).locator('rect').first().waitFor();
    await screenshotBoth(page, 'overview-live');
    // Phone width: the nav folds into a menu.
    await page.setViewportSize({ width: 390, height: 844 });
    await open('/chat');
    await page.getByRole('button', { name: /Menu/ }).waitFor();
    await screenshotBoth(page, 'chat-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  }, 120_000);

  it('a MEMBER sees only their own pages and data; admin pages and other users\' data are refused (UI and GraphQL)', async () => {
    const ownerSession = (await send(owner, '/whoami')).sessionId;
    const memberContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const mpage = await memberContext.newPage();
      // Members land on their chat; the nav has no admin pages.
      await signIn(mpage, t.url, member.token, { heading: 'Chat' });
      const nav = mpage.getByRole('navigation', { name: 'Main' });
      expect(await nav.getByRole('link').allTextContents()).toEqual(['Chat', 'Sessions', 'Memories', 'Documents', 'Beats', 'MCP servers', 'Account']);
      await mpage.goto(`${t.url}/admin/users`);
      await mpage.getByText('Users & trust needs ADMIN trust or higher').waitFor();
      await screenshotBoth(mpage, 'member-forbidden');
      await mpage.goto(`${t.url}/admin/sessions/${ownerSession}`);
      await mpage.getByRole('alert').getByText(/not allowed/i).waitFor();
      await mpage.goto(`${t.url}/admin/sessions`);
      await mpage.getByText(/No sessions|web:/).first().waitFor();
      expect(await mpage.getByText(`web:`).count()).toBe(0);
      await mpage.goto(`${t.url}/admin/memories`);
      await mpage.getByText('No memories yet').waitFor();

      const m = t.client(member.token);
      expect((await m.http(USERS)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect((await m.http(SESSION, { id: ownerSession })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect((await m.http(FAILED)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      await m.close();
    } finally {
      await memberContext.close();
    }
  });

  it('no page threw an uncaught error', () => {
    expect(pageErrors).toEqual([]);
  });

  it('signs out', async () => {
    await open('/');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    await page.reload();
    await page.getByLabel('API token').waitFor();
  });
});
