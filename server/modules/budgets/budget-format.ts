/** `$1.25`, or for amounts under a cent `$0.0042`: money as users read it. */
export function formatUsd(usd: number): string {
  if (usd > 0 && usd < 0.0001) return '<$0.0001';
  if (usd > 0 && usd < 0.01) return `$${usd.toPrecision(2)}`;
  return `$${usd.toFixed(2)}`;
}

/** `$0.82 of $1.00`, or `$0.82 (unlimited)`. */
export function spentOf(spent: number, limit: number | null): string {
  return limit === null ? `${formatUsd(spent)} (unlimited)` : `${formatUsd(spent)} of ${formatUsd(limit)}`;
}
