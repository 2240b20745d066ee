export function fmtDate(iso: string | null | undefined): string {
  if (!iso) return '–';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

export function fmtNum(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 10_000) return `${(n / 1000).toFixed(1)}k`;
  return n.toLocaleString();
}

export function fmtAgo(iso: string | null | undefined): string {
  if (!iso) return '–';
  const s = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (s < 60) return `${Math.max(0, s)}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

/** Offers text as a file download. */
export function download(name: string, text: string, type = 'application/x-ndjson'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** A job's failure reason; model-call failures are JSON with a `message`. */
export function failureText(reason: string | null | undefined): string {
  if (!reason) return 'failed';
  try {
    const parsed = JSON.parse(reason) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : reason;
  } catch {
    return reason;
  }
}

/** Dollars: cents for amounts from a cent up, four decimals below (a few tokens cost fractions of a cent). */
export function fmtUsd(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  if (n === 0) return '$0';
  return Math.abs(n) >= 0.01 ? `$${n.toFixed(2)}` : `$${n.toFixed(4)}`;
}
