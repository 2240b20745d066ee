/** True when `zone` is an IANA time zone name this runtime knows (e.g. `Europe/Berlin`, `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The time zone of this process (`TZ`, else the system's). */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(zone, f);
  }
  return f;
}

/** The wall-clock date and time in `zone` at `instant`. */
export function wallClock(instant: Date, zone: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const parts = Object.fromEntries(formatterFor(zone).formatToParts(instant).map((p) => [p.type, p.value]));
  return { year: +parts.year!, month: +parts.month!, day: +parts.day!, hour: +parts.hour! % 24, minute: +parts.minute!, second: +parts.second! };
}

/** Minutes `zone` is ahead of UTC at `instant` (negative west of Greenwich). */
function offsetMinutes(instant: number, zone: string): number {
  const w = wallClock(new Date(instant), zone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 60_000);
}

/**
 * The instant at which the wall clock in `zone` shows `year-month-day hour:00` (month 1–12; days out of
 * range roll over like Date.UTC). In a DST gap the hour does not exist; the instant an hour later is used.
 */
export function zonedHour(year: number, month: number, day: number, hour: number, zone: string): Date {
  const wall = Date.UTC(year, month - 1, day, hour);
  let t = wall - offsetMinutes(wall, zone) * 60_000;
  t = wall - offsetMinutes(t, zone) * 60_000;
  return new Date(t);
}
