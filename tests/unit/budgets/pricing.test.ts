/** The price table of issue 25: which key wins, cached input, the provider's own cost, estimates, unpriced models. */
import { PriceTable } from '../../../server/modules/budgets';
import { parseUsage } from '../../../server/modules/models/openai-compatible/wire';

const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0, costUsd?: number) => ({ inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens: 0, estimated: false, ...(costUsd !== undefined ? { costUsd } : {}) });

describe('PriceTable', () => {
  const table = new PriceTable({
    'gpt-4o': { input_per_mtok: 2.5, output_per_mtok: 10, cached_input_per_mtok: 1.25 },
    'azure/gpt-4o': { input_per_mtok: 5, output_per_mtok: 15, cached_input_per_mtok: null },
  });

  it('prices by provider/model before model, and cached input at its own price', () => {
    // 1M input of which 400k cached, 100k output: 600k × 2.5 + 400k × 1.25 + 100k × 10 per million.
    expect(table.costOf('openai', 'gpt-4o', usage(1_000_000, 100_000, 400_000))).toBeCloseTo(1.5 + 0.5 + 1, 10);
    // The provider-qualified key wins; without a cached price cached tokens cost as input.
    expect(table.costOf('azure', 'gpt-4o', usage(1_000_000, 100_000, 400_000))).toBeCloseTo(5 + 1.5, 10);
  });

  it("uses the provider's own reported cost, and gives null for a model without a price", () => {
    expect(table.costOf('openrouter', 'gpt-4o', usage(1_000_000, 0, 0, 0.0123))).toBe(0.0123);
    expect(table.costOf('local', 'llama3', usage(1000, 1000))).toBeNull();
    expect(table.costOf('local', 'llama3', usage(1000, 1000, 0, 0.5))).toBe(0.5);
  });

  it('estimates a call as its whole prompt uncached plus the full output allowance; unpriced models estimate 0', () => {
    expect(table.estimate('openai', 'gpt-4o', 2000, 4096)).toBeCloseTo((2000 * 2.5 + 4096 * 10) / 1e6, 12);
    expect(table.estimate('local', 'llama3', 2000, 4096)).toBe(0);
  });

  it('reads usage.cost from the wire leniently', () => {
    expect(parseUsage({ prompt_tokens: 10, completion_tokens: 5, cost: 0.002 })).toMatchObject({ inputTokens: 10, outputTokens: 5, costUsd: 0.002 });
    expect(parseUsage({ prompt_tokens: 10, completion_tokens: 5, cost: '0.002' })).not.toHaveProperty('costUsd');
    expect(parseUsage({ prompt_tokens: 10, completion_tokens: 5, cost: -1 })).not.toHaveProperty('costUsd');
  });
});
