/**
 * The one-line message a user sees when the model could not answer. It names the kind of problem
 * (rate limit, unreachable, rejected) without internals or secrets.
 */
export function describeModelFailure(err: unknown): string {
  const e = err as { name?: string; status?: number; message?: string; provider?: string };
  const who = e.provider ? ` (${e.provider})` : '';
  switch (e.name) {
    case 'ModelTransportError':
      // The message of a timeout names it (`did not answer within … ms`, or the SDK's `timed out`).
      if (/did not answer within|timed out/.test(e.message ?? '')) return `⚠️ The model provider${who} did not answer in time. Please try again in a moment.`;
      return `⚠️ The model provider${who} is unreachable right now. Please try again in a moment.`;
    case 'ModelResponseError':
      return `⚠️ The model provider${who} sent an answer that could not be read. Please try again.`;
    case 'ContextLengthError':
      return `⚠️ This conversation is too long for the model${who}. Use /new to start fresh or /compact to summarise it.`;
    case 'BudgetExceededError':
      // Its message says which budget is spent and when it resets.
      return `⛔ ${e.message}`;
    case 'ModelApiError':
      if (e.status === 429) return `⚠️ The model provider${who} is rate-limiting us. Please try again shortly.`;
      return `⚠️ The model provider${who} refused the request (HTTP ${e.status ?? '?'}). Please try again later.`;
    default:
      return '⚠️ Something went wrong while answering. Please try again.';
  }
}
