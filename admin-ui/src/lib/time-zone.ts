/** Every IANA zone the browser knows (for the time zone field), with UTC first. */
export function timeZones(): string[] {
  const all = (Intl as unknown as { supportedValuesOf?(k: string): string[] }).supportedValuesOf?.('timeZone') ?? [];
  return ['UTC', ...all.filter((z) => z !== 'UTC')];
}

/** A time as it reads in `timeZone`: "Mon, 7 Dec 2026, 07:00 CET". */
export function fmtInZone(iso: string | null | undefined, timeZone: string): string {
  if (!iso) return '–';
  try {
    return new Intl.DateTimeFormat(undefined, { timeZone, weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' }).format(new Date(iso));
  } catch {
    return new Date(iso).toISOString();
  }
}

/** A duration in ms as "850 ms", "3.2 s" or "2 min 5 s". */
export function fmtDuration(ms: number | null | undefined): string {
  if (ms == null) return '–';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
