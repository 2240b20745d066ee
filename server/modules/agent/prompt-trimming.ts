import type { ChatMessage } from '../models';

/**
 * Splits history into exchanges: each starts at a user message and holds the replies, tool calls and
 * tool results that followed it. Messages before the first user message (a reply whose question is
 * gone) belong to no exchange and are left out, so kept history never starts with an orphan reply.
 */
export function groupExchanges(history: ChatMessage[]): ChatMessage[][] {
  const out: ChatMessage[][] = [];
  for (const m of history) {
    if (m.role === 'user') out.push([m]);
    else if (out.length) out[out.length - 1]!.push(m);
  }
  return out;
}

/**
 * `text` cut (at a line or word boundary where possible) so that it, with `mark` appended, estimates at
 * most `maxTokens` as one system message; `text` itself when it already fits.
 */
export function cutToTokens(text: string, maxTokens: number, mark: string, estimate: (messages: ChatMessage[]) => number): string {
  const size = (t: string) => estimate([{ role: 'system', content: t }]);
  if (size(text) <= maxTokens) return text;
  let lo = 0;
  let hi = text.length;
  // Binary search on the length: the estimator is monotone in the text's length.
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (size(text.slice(0, mid) + mark) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  let cut = text.slice(0, lo);
  const boundary = Math.max(cut.lastIndexOf('\n'), cut.lastIndexOf(' '));
  if (boundary > cut.length * 0.8) cut = cut.slice(0, boundary);
  return cut.trimEnd() + mark;
}
