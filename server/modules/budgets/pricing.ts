import type { PriceConfig } from '../../config';
import type { Usage } from '../models';

/** USD per million tokens of one model. */
export interface ModelPrice {
  inputPerMtok: number;
  outputPerMtok: number;
  /** Cached input tokens; null charges them as input. */
  cachedInputPerMtok: number | null;
}

/**
 * The `pricing` table: prices keyed `<provider>/<model>` or `<model>`; the provider-qualified key
 * wins, so one model served by two providers can cost differently.
 */
export class PriceTable {
  private readonly prices: ReadonlyMap<string, ModelPrice>;

  constructor(config: Readonly<Record<string, PriceConfig>>) {
    this.prices = new Map(
      Object.entries(config).map(([key, p]) => [key, { inputPerMtok: p.input_per_mtok, outputPerMtok: p.output_per_mtok, cachedInputPerMtok: p.cached_input_per_mtok }]),
    );
  }

  /** The price of a model on a provider, or null when neither key is in the table. */
  priceOf(provider: string, model: string): ModelPrice | null {
    return this.prices.get(`${provider}/${model}`) ?? this.prices.get(model) ?? null;
  }

  /**
   * What a call cost in USD: the provider's own figure when it sent one, else its tokens at the
   * table's price (cached input at the cached price); null when neither is known.
   */
  costOf(provider: string, model: string, usage: Usage): number | null {
    if (usage.costUsd !== undefined) return usage.costUsd;
    const price = this.priceOf(provider, model);
    if (!price) return null;
    const cached = Math.min(usage.cacheReadTokens, usage.inputTokens);
    const fresh = usage.inputTokens - cached;
    return (fresh * price.inputPerMtok + cached * (price.cachedInputPerMtok ?? price.inputPerMtok) + usage.outputTokens * price.outputPerMtok) / 1_000_000;
  }

  /** The most a call can cost before it runs: every prompt token uncached, plus the full output allowance. */
  estimate(provider: string, model: string, promptTokens: number, maxOutputTokens: number): number {
    const price = this.priceOf(provider, model);
    if (!price) return 0;
    return (promptTokens * price.inputPerMtok + maxOutputTokens * price.outputPerMtok) / 1_000_000;
  }
}
