import type { AppConfig } from '../../config';
import { MODEL_ROLES } from '../../modules/models';
import { PriceTable } from '../../modules/budgets';
import type { CheckResult } from './check';

/** `provider/model` of every route the config names (roles, their fallbacks, the downgrade route). */
function configuredModels(config: AppConfig): Array<{ provider: string; model: string; where: string }> {
  const out: Array<{ provider: string; model: string; where: string }> = [];
  const providers = config.ai.providers;
  const add = (provider: string, model: string | null, where: string) => {
    const chosen = model ?? providers[provider]?.model ?? null;
    if (chosen && !out.some((m) => m.provider === provider && m.model === chosen)) out.push({ provider, model: chosen, where });
  };
  const first = Object.keys(providers)[0];
  for (const role of MODEL_ROLES) {
    const route = config.ai.roles[role];
    if (!route) {
      if (first) add(first, null, `ai.roles.${role}`);
      continue;
    }
    add(route.provider, route.model, `ai.roles.${role}`);
    route.fallbacks.forEach((f, i) => add(f.provider, f.model, `ai.roles.${role}.fallbacks.${i}`));
  }
  const downgrade = config.budgets.downgrade_to;
  if (downgrade && typeof downgrade === 'object') add(downgrade.provider, downgrade.model, 'budgets.downgrade_to');
  return out;
}

/**
 * Models without a price in `pricing`: their calls are counted in tokens only and cost nothing against
 * budgets. A warning (not a failure): local models are often free. Mock providers are left out.
 */
export function checkPricing(config: AppConfig): CheckResult {
  const prices = new PriceTable(config.pricing);
  const models = configuredModels(config).filter((m) => config.ai.providers[m.provider]?.preset !== 'mock');
  if (!models.length) return { name: 'pricing', verdict: 'ok', message: 'no hosted model configured; nothing to price' };
  const missing = models.filter((m) => !prices.priceOf(m.provider, m.model));
  if (!missing.length) return { name: 'pricing', verdict: 'ok', message: `every configured model has a price (${models.length})` };
  const budgets = Object.keys(config.budgets.defaults).length ? ' and cost nothing against budgets' : '';
  return {
    name: 'pricing',
    verdict: 'warn',
    message: `${missing.length} model${missing.length === 1 ? ' has' : 's have'} no price: their calls count tokens only${budgets}`,
    hint: `add pricing."<model>" (or "<provider>/<model>") with input_per_mtok and output_per_mtok; providers that report their own cost (OpenRouter) need none`,
    details: missing.map((m) => `${m.provider}/${m.model} (${m.where})`),
  };
}
