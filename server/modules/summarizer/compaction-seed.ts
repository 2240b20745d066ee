import { estimateTokens } from '../models';
import type { Message } from '../sessions';
import { MessageRole } from '../sessions';

export interface SeedPlan {
  /** The summary the new session starts with (shortened when it alone would take most of the seed budget). */
  summary: string;
  /** Copies of the most recent whole turns that fit next to the summary and the carried messages. */
  kept: Message[];
  /** Tokens of summary + kept + carried messages: what the new session starts with. */
  tokens: number;
  /** The carried messages alone take more than the seed budget: the new session cannot start small. */
  carriedTooLarge: boolean;
  carriedTokens: number;
}

const tokensOf = (messages: Message[]) => messages.reduce((n, m) => n + estimateTokens(m.content) + 4, 0);

/**
 * What a compacted session is seeded with, so that it starts well under the compaction threshold and
 * the next turns do not compact again at once: the summary (at most half the budget), then as many of
 * the last whole turns as fit in what is left next to the messages carried over (the running turn).
 */
export function planSeed(summary: string, recent: Message[], carried: Message[], budgetTokens: number): SeedPlan {
  const carriedTokens = tokensOf(carried);
  let text = summary;
  const maxSummary = Math.max(256, Math.floor(budgetTokens / 2));
  if (estimateTokens(text) > maxSummary) {
    const keep = Math.floor(text.length * (maxSummary / estimateTokens(text)) * 0.95);
    text = `${text.slice(0, keep).trimEnd()}\n[… shortened to fit the context window]`;
  }
  const room = budgetTokens - estimateTokens(text) - carriedTokens;
  const turns: Message[][] = [];
  for (const m of recent) {
    if (m.role === MessageRole.USER || !turns.length) turns.push([m]);
    else turns[turns.length - 1]!.push(m);
  }
  let kept = turns;
  while (kept.length && tokensOf(kept.flat()) > room) kept = kept.slice(1);
  const flat = kept.flat();
  return {
    summary: text,
    kept: flat,
    tokens: estimateTokens(text) + tokensOf(flat) + carriedTokens,
    carriedTooLarge: carriedTokens > budgetTokens,
    carriedTokens,
  };
}
