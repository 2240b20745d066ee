import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';

/** Serious and critical axe-core violations of the page (WCAG 2 A/AA rules), as "rule: target" lines. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(' ')} — ${n.failureSummary?.split('\n')[1]?.trim() ?? v.help}`));
}

/** The same in light and in dark (the console follows the system's scheme), labelled by scheme. */
export async function seriousViolationsBoth(page: Page): Promise<string[]> {
  const out: string[] = [];
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await page.waitForTimeout(60);
    out.push(...(await seriousViolations(page)).map((v) => `[${colorScheme}] ${v}`));
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return out;
}
