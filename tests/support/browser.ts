import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`); the real binary starts faster than the wrapper. */
export const CHROMIUM_PATH = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => existsSync(p));

export const ARTIFACTS = path.resolve(__dirname, '..', 'artifacts');

/** One headless Chromium for a test file. */
export async function launchBrowser(): Promise<Browser> {
  if (!CHROMIUM_PATH) throw new Error('Browser tests need Chromium: apt-get install -y chromium (.ci/run does this).');
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

/** Saves the page in light and dark into tests/artifacts/admin-<name>-<scheme>.png. */
export async function screenshotBoth(page: Page, name: string): Promise<string[]> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const files: string[] = [];
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await page.waitForTimeout(60);
    const file = path.join(ARTIFACTS, `admin-${name}-${colorScheme}.png`);
    await page.screenshot({ path: file, fullPage: true });
    files.push(file);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return files;
}
