import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createUserWithToken, eventually } from '../../support/chat-helpers';
import { FakeOAuthServer } from '../../support/fakes/fake-oauth-server';
import { launchBrowser, screenshotBoth } from '../../support/browser';
import { newConsolePage, signIn } from '../../support/console-page';
import { everythingServer } from '../../support/mcp/everything';
import { TestMcpHttpServer } from '../../support/mcp/test-mcp-http-server';
import { startTestApp, type TestApp } from '../../support/test-app';

jest.setTimeout(60_000);

/**
 * The console's MCP page in a real Chromium: each server's state, last error and tools (server-everything
 * over stdio, a missing command, an OAuth server), restart for admins, and a member's own sign-in link.
 */
describe('console: MCP servers page', () => {
  let t: TestApp;
  let as: FakeOAuthServer;
  let remote: TestMcpHttpServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    as = await FakeOAuthServer.start();
    remote = await TestMcpHttpServer.start({ oauth: { issuer: as.issuer, check: (a) => as.check(a) } });
    [t, browser] = await Promise.all([
      startTestApp({
        config: {
          log: { level: 'warn' },
          mcp: {
            servers: {
              everything: everythingServer({ connect: 'start', requires_approval: false }),
              missing: { transport: 'stdio', command: '/nonexistent/mcp-server' },
              cal: { transport: 'http', url: remote.url, auth: 'oauth', min_trust: 'MEMBER' },
            },
          },
        },
      }),
      launchBrowser(),
    ]);
    ({ context, page } = await newConsolePage(browser, pageErrors, { viewport: { width: 1280, height: 900 }, timeoutMs: 15_000 }));
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
    await remote?.close();
    await as?.close();
  });

  it('an OWNER sees each server\'s state, last error and tools, and can restart one', async () => {
    await signIn(page, t.url, t.ownerToken);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'MCP servers' }).click();
    await page.getByRole('heading', { name: 'MCP servers' }).waitFor();
    const everything = page.getByRole('region', { name: 'MCP server everything' });
    await everything.getByText('READY').waitFor();
    await everything.getByRole('table', { name: 'Tools of everything' }).getByText('everything__echo', { exact: true }).waitFor();
    const missing = page.getByRole('region', { name: 'MCP server missing' });
    // Restart connects it again: the missing command fails and says why.
    await missing.getByRole('button', { name: 'Restart' }).click();
    await missing.getByText('FAILED').waitFor();
    await missing.getByRole('alert', { name: 'Last error of missing' }).getByText(/was not found/).waitFor();
    const cal = page.getByRole('region', { name: 'MCP server cal' });
    await cal.getByText('not connected').waitFor();
    await screenshotBoth(page, 'mcp-servers-owner');
    const pidBefore = await everything.getByText(/pid \d+/).textContent();
    await everything.getByRole('button', { name: 'Restart' }).click();
    await everything.getByText('READY').waitFor();
    const oldPid = /pid \d+\b/.exec(pidBefore ?? '')![0];
    await eventually(async () => /pid \d+\b/.exec((await everything.textContent()) ?? '')?.[0] !== oldPid, 15_000, 'a new process after the restart');
    expect(pageErrors).toEqual([]);
  });

  it('a MEMBER sees only what they may use, no setup or errors, and gets their own sign-in link', async () => {
    const owner = t.client(t.ownerToken);
    const member = await createUserWithToken(owner, 'Mia Member', 'MEMBER');
    await owner.close();
    await context.close();
    ({ context, page } = await newConsolePage(browser, pageErrors, { viewport: { width: 1280, height: 900 }, timeoutMs: 15_000 }));
    await signIn(page, t.url, member.token);
    await page.goto(`${t.url}/admin/mcp`);
    await page.getByRole('heading', { name: 'MCP servers' }).waitFor();
    const cal = page.getByRole('region', { name: 'MCP server cal' });
    await cal.waitFor();
    // TRUSTED-only servers are not listed for a MEMBER; nothing offers a restart or shows an error.
    expect(await page.getByRole('region', { name: 'MCP server everything' }).count()).toBe(0);
    expect(await page.getByRole('region', { name: 'MCP server missing' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Restart' }).count()).toBe(0);
    await cal.getByRole('button', { name: 'Sign in' }).click();
    const link = cal.getByTestId('oauth-link');
    await link.waitFor();
    const href = (await link.getAttribute('href'))!;
    expect(new URL(href).origin).toBe(as.issuer);
    expect(new URL(href).searchParams.get('redirect_uri')).toBe(`${t.url}/oauth/mcp/callback`);
    // A sign-in that was started but not completed is not a connection.
    await page.reload();
    await cal.getByText('not connected').waitFor();
    expect(await cal.getByText(/from the config file · auth oauth · from MEMBER/).count()).toBe(1);
    await screenshotBoth(page, 'mcp-servers-member');
    expect(pageErrors).toEqual([]);
  });
});
