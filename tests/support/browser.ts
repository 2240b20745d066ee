import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';

/** Debian's Chromium (`apt-get install -y chromium`); the real binary starts faster than the wrapper. */
export const CHROMIUM_PATH = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => existsSync(p));

export const ARTIFACTS = path.resolve(__dirname, '..', 'artifacts');

/** One headless Chromium for a test file; `extraArgs` adds flags (e.g. a fake microphone). */
export async function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  if (!CHROMIUM_PATH) throw new Error('Browser tests need Chromium: apt-get install -y chromium (.ci/run does this).');
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', ...extraArgs],
  });
}

/** axe-core impacts that fail a page. */
const BLOCKING_IMPACTS = new Set(['serious', 'critical']);

/**
 * Runs axe-core (WCAG 2.x A/AA rules) on the page as it is and returns its serious and critical
 * violations, one line each: rule, impact, help and the first offending elements.
 */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations
    .filter((v) => BLOCKING_IMPACTS.has(v.impact ?? ''))
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

/**
 * Saves the page in light and dark into tests/artifacts/admin-<name>-<scheme>.png and checks each with
 * axe-core: a serious or critical accessibility violation in either scheme fails the test.
 */
export async function screenshotBoth(page: Page, name: string, options: { a11y?: boolean } = {}): Promise<string[]> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const files: string[] = [];
  const violations: string[] = [];
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await page.waitForTimeout(60);
    const file = path.join(ARTIFACTS, `admin-${name}-${colorScheme}.png`);
    await page.screenshot({ path: file, fullPage: true });
    files.push(file);
    if (options.a11y !== false) violations.push(...(await seriousA11yViolations(page)).map((v) => `[${name}, ${colorScheme}] ${v}`));
  }
  await page.emulateMedia({ colorScheme: 'light' });
  if (violations.length) throw new Error(`axe-core found serious or critical accessibility violations:\n${violations.join('\n')}`);
  return files;
}
