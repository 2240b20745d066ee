/**
 * Issue 28: a beat's message in the console's chat says which beat sent it, with a link to the beat, and
 * still does after a reload. Real Chromium, real server; the reminder needs no model.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../../support/test-app';
import { send } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { CreateBeatDocument, RunBeatDocument } from '../../support/graphql/generated';
import { launchBrowser, screenshotBoth } from '../../support/browser';
import { newConsolePage, signIn } from '../../support/console-page';

jest.setTimeout(60_000);

describe('console chat: beat attribution', () => {
  let t: TestApp;
  let owner: GraphQLTestClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp({ config: { log: { level: 'warn' } } }), launchBrowser()]);
    owner = t.client(t.ownerToken);
    await send(owner, '/whoami'); // the owner's web session: their principal chat
    ({ context, page } = await newConsolePage(browser, pageErrors, { viewport: { width: 1280, height: 860 }, timeoutMs: 15_000 }));
    await signIn(page, t.url, t.ownerToken);
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await owner?.close();
    await t?.close();
  });

  it('a beat run now shows up in the chat under the beat’s name, linking to it, also after a reload', async () => {
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
    const beat = dataOf(await owner.http(CreateBeatDocument, { input: { name: 'Plant watering', kind: 'REMINDER', text: 'Water the basil and the fern.', cron: '0 8 * * *' } })).createBeat;
    expect(dataOf(await owner.http(RunBeatDocument, { id: beat.id })).runBeat.status).toBe('OK');

    const bubble = page.locator(`[data-beat="${beat.id}"]`);
    await bubble.getByText('Water the basil and the fern.').waitFor();
    await bubble.getByText('From the beat').waitFor();
    const link = bubble.getByRole('link', { name: 'Plant watering' });
    expect(await link.getAttribute('href')).toBe(`/admin/beats/${beat.id}`);
    await screenshotBoth(page, 'chat-beat');

    await page.reload();
    await page.locator(`[data-beat="${beat.id}"]`).getByRole('link', { name: 'Plant watering' }).waitFor();

    await link.click();
    await page.getByRole('heading', { name: 'Plant watering' }).waitFor();
    expect(pageErrors).toEqual([]);
  });

  it('on a phone the chat input and Send button are on screen, next to the beat’s message', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const p = await phone.newPage();
    await signIn(p, t.url, t.ownerToken);
    await p.goto(`${t.url}/admin/chat`);
    await p.getByText('From the beat').first().waitFor();
    const sendButton = await p.getByRole('button', { name: 'Send' }).boundingBox();
    expect(sendButton!.y + sendButton!.height).toBeLessThanOrEqual(844);
    expect(sendButton!.x + sendButton!.width).toBeLessThanOrEqual(390);
    await screenshotBoth(p, 'chat-beat-phone');
    await phone.close();
  });
});
