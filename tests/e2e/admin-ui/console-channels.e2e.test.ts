/**
 * Issue 28: Telegram and WhatsApp set up from the console's Channels page, in a real Chromium against a
 * real server with the fake Bot API and the fake WhatsApp socket. The OWNER enters a bot token (a wrong
 * one is explained, the right one starts the bot without a restart), turns WhatsApp on, sees its linking
 * QR and then the connection; an ADMIN sees the set-up but cannot change it. Each state is saved in light
 * and dark (and on a phone) and checked with axe-core.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeTelegramServer } from '../../support/fakes/fake-telegram-server';
import { fakeSocketFactory } from '../../support/fakes/fake-whatsapp-socket';
import { createUserWithToken, eventually } from '../../support/chat-helpers';
import { launchBrowser, screenshotBoth } from '../../support/browser';
import { newConsolePage, signIn } from '../../support/console-page';
import { newBotToken } from '../telegram/telegram-kit';

jest.setTimeout(90_000);

describe('console: Channels page', () => {
  const token = newBotToken();
  const wa = fakeSocketFactory();
  let tg: FakeTelegramServer;
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    tg = await FakeTelegramServer.start({ token, botUsername: 'raven_helper_bot' });
    [t, browser] = await Promise.all([
      startTestApp({
        config: { channels: { telegram: { enabled: false, api_root: tg.url }, whatsapp: { enabled: false } }, log: { level: 'warn' } },
        channelSdk: { whatsAppSocket: wa.make },
      }),
      launchBrowser(),
    ]);
    ({ context, page } = await newConsolePage(browser, pageErrors, { viewport: { width: 1280, height: 900 }, timeoutMs: 15_000 }));
    await signIn(page, t.url, t.ownerToken);
  }, 90_000);
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
    await tg?.close();
  });

  it('Telegram: a wrong token is explained and not kept; the right one connects the bot at once', async () => {
    // The overview points to where Telegram is set up.
    await page.getByRole('link', { name: 'telegram not set up: set it up on the Channels page' }).click();
    await page.getByRole('heading', { name: 'Channels', level: 1 }).waitFor();
    const telegram = page.getByRole('region', { name: 'Telegram set-up' });
    await telegram.getByText('Not set up yet.').waitFor();
    await screenshotBoth(page, 'channels-empty');

    const input = telegram.getByRole('textbox', { name: 'Bot token' });
    expect(await input.getAttribute('type')).toBe('password');
    await input.fill(newBotToken());
    await telegram.getByRole('button', { name: 'Save and connect' }).click();
    await telegram.getByText(/Telegram did not accept this token: 401 Unauthorized/).waitFor();

    await input.fill(token);
    await telegram.getByRole('button', { name: 'Save and connect' }).click();
    await telegram.getByRole('status').getByText('@raven_helper_bot').waitFor();
    expect(await input.inputValue()).toBe('');
    // Applied without a restart: the bot polls, and the card shows it.
    await telegram.getByText('POLLING').waitFor();
    await telegram.getByText(/Set up here on .*stored encrypted/).waitFor();
    expect(tg.callsOf('getUpdates').length).toBeGreaterThan(0);
    // The page never shows the token.
    expect(await page.content()).not.toContain(token.split(':')[1]);
  });

  it('WhatsApp: turning it on shows the linking QR, then the connection', async () => {
    const card = page.getByRole('region', { name: 'WhatsApp set-up' });
    await card.getByRole('button', { name: 'Turn on WhatsApp' }).click();
    await eventually(() => wa.sockets.length > 0, 15_000, 'a WhatsApp socket');
    wa.latest().qr('2@console-link-code,QmFzZTY0S2V5,UHVibGljS2V5,QWR2');
    const qr = card.getByRole('img', { name: /WhatsApp linking QR code/ });
    await qr.waitFor();
    await card.getByText('Linked devices → Link a device').waitFor();
    await screenshotBoth(page, 'channels-whatsapp-qr');

    wa.latest().open();
    await card.getByText('Linked and connected').waitFor();
    await qr.waitFor({ state: 'detached' });
    await screenshotBoth(page, 'channels');
    const table = page.getByRole('table', { name: 'Channels' });
    await table.locator('tr', { hasText: 'whatsapp' }).getByText('CONNECTED').waitFor();
    await table.locator('tr', { hasText: 'telegram' }).getByText('POLLING').waitFor();
  });

  it('on a phone the set-up cards stack and stay usable', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const p = await phone.newPage();
    await signIn(p, t.url, t.ownerToken);
    await p.goto(`${t.url}/admin/channels`);
    await p.getByRole('region', { name: 'Telegram set-up' }).getByText('@raven_helper_bot').waitFor();
    const box = await p.getByRole('region', { name: 'WhatsApp set-up' }).boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    await screenshotBoth(p, 'channels-phone');
    await phone.close();
  });

  it('an ADMIN sees the set-up and the states but cannot change them', async () => {
    const owner = t.client(t.ownerToken);
    const admin = await createUserWithToken(owner, 'Ada Admin', 'ADMIN');
    await owner.close();
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await ctx.newPage();
    await signIn(p, t.url, admin.token);
    await p.goto(`${t.url}/admin/channels`);
    const telegram = p.getByRole('region', { name: 'Telegram set-up' });
    await telegram.getByText('Only an OWNER can change how Telegram is set up.').waitFor();
    expect(await telegram.getByRole('textbox', { name: 'Bot token' }).count()).toBe(0);
    expect(await p.getByRole('button', { name: 'Turn on WhatsApp' }).count()).toBe(0);
    await ctx.close();
  });

  it('the Tools page keeps the tool matrix; no page error happened', async () => {
    await page.goto(`${t.url}/admin/tools`);
    await page.getByRole('switch', { name: 'current_time on telegram' }).waitFor();
    await screenshotBoth(page, 'tools');
    expect(pageErrors).toEqual([]);
  });
});
