import type { Browser, BrowserContext, Page } from 'playwright-core';

/**
 * A fresh browser context and page for the admin console: every wait of the page times out after
 * `timeoutMs`, and each uncaught error thrown in the page is pushed onto `pageErrors`.
 */
export async function newConsolePage(browser: Browser, pageErrors: string[], options: { viewport: { width: number; height: number }; timeoutMs: number }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: options.viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(options.timeoutMs);
  page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));
  return { context, page };
}

/**
 * Signs in to the console at `baseUrl` with an API token and waits for the page it lands on: the heading
 * `landing.heading` when given, else the main navigation.
 */
export async function signIn(page: Page, baseUrl: string, token: string, landing: { heading?: string } = {}): Promise<void> {
  await page.goto(`${baseUrl}/admin/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  if (landing.heading) await page.getByRole('heading', { name: landing.heading }).waitFor();
  else await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** Opens the console page at `path` (e.g. `/beats`) and waits for the main navigation. */
export async function openConsole(page: Page, baseUrl: string, path: string): Promise<void> {
  await page.goto(`${baseUrl}/admin${path}`);
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}
