import { wallClock, zonedHour } from '../../common/time-zone';

/** The day and month an instant falls in, in a time zone, with when each began and ends. */
export interface BudgetPeriods {
  /** `YYYY-MM-DD` in the zone. */
  day: string;
  /** `YYYY-MM` in the zone. */
  month: string;
  dayStart: Date;
  dayEnd: Date;
  monthStart: Date;
  monthEnd: Date;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The budget periods of `instant` in `zone`: days and months begin at local midnight (DST-aware). */
export function periodsAt(instant: Date, zone: string): BudgetPeriods {
  const w = wallClock(instant, zone);
  return {
    day: `${w.year}-${pad(w.month)}-${pad(w.day)}`,
    month: `${w.year}-${pad(w.month)}`,
    dayStart: zonedHour(w.year, w.month, w.day, 0, zone),
    dayEnd: zonedHour(w.year, w.month, w.day + 1, 0, zone),
    monthStart: zonedHour(w.year, w.month, 1, 0, zone),
    monthEnd: zonedHour(w.year, w.month + 1, 1, 0, zone),
  };
}

/** `2026-12-06 00:00 Europe/Berlin (in 4 h 10 min)`: when a period resets, for the user. */
export function describeReset(at: Date, now: Date, zone: string): string {
  const w = wallClock(at, zone);
  const minutesLeft = Math.ceil(Math.max(0, at.getTime() - now.getTime()) / 60_000);
  const hours = Math.floor(minutesLeft / 60);
  const minutes = minutesLeft % 60;
  const inText = hours >= 48 ? `${Math.round(hours / 24)} days` : hours ? `${hours} h${minutes ? ` ${minutes} min` : ''}` : `${minutes} min`;
  return `${w.year}-${pad(w.month)}-${pad(w.day)} ${pad(w.hour)}:${pad(w.minute)} ${zone} (in ${inText})`;
}
