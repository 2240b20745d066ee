import { CronExpressionParser } from 'cron-parser';
import cronstrue from 'cronstrue';
import { UserInputError } from '../../common/errors';
import { isTimeZone } from '../../common/time-zone';

/** How a beat is scheduled: a cron expression in a time zone, or once at a time. */
export type BeatTiming = { cron: string; timezone: string; at?: null } | { cron?: null; timezone: string; at: Date };

const CRON_HELP =
  'Use 5 fields "minute hour day-of-month month day-of-week" (e.g. "0 7 * * *" = 07:00 every day, "30 8 * * 1-5" = 08:30 on weekdays), ' +
  'or 6 with seconds first.';

/** Throws a BAD_USER_INPUT error naming the time zone and how to fix it. */
export function checkTimeZone(tz: string): void {
  if (!isTimeZone(tz)) {
    throw new UserInputError(`Unknown time zone "${tz}". Use an IANA name such as "UTC", "Europe/Berlin" or "America/New_York".`, 'timezone');
  }
}

/**
 * Validates a cron expression in a time zone and returns it trimmed; throws BAD_USER_INPUT with a message
 * that says what is wrong and how to write it.
 */
export function checkCron(cron: string, timezone: string): string {
  checkTimeZone(timezone);
  const expr = cron.trim().replace(/\s+/g, ' ');
  const fields = expr.split(' ').length;
  if (!expr.startsWith('@') && fields !== 5 && fields !== 6) {
    throw new UserInputError(`Invalid cron expression "${cron}": it has ${fields} field(s). ${CRON_HELP}`, 'cron');
  }
  try {
    CronExpressionParser.parse(expr, { tz: timezone, strict: false }).next();
  } catch (err) {
    throw new UserInputError(`Invalid cron expression "${cron}": ${(err as Error).message}. ${CRON_HELP}`, 'cron');
  }
  return expr;
}

/** The next `count` run times of a cron expression after `from`. */
export function nextCronRuns(cron: string, timezone: string, from: Date, count: number): Date[] {
  const it = CronExpressionParser.parse(cron, { tz: timezone, currentDate: from });
  const out: Date[] = [];
  for (let i = 0; i < count; i++) {
    try {
      out.push(it.next().toDate());
    } catch {
      break;
    }
  }
  return out;
}

/** The next `count` runs of a timing (a one-shot beat has at most one, if it is still ahead). */
export function previewRuns(timing: { cron: string | null; timezone: string; at: Date | null }, from: Date, count = 5): Date[] {
  if (timing.cron) return nextCronRuns(timing.cron, timing.timezone, from, count);
  return timing.at && timing.at.getTime() > from.getTime() ? [timing.at] : [];
}

/** Shortest gap between consecutive runs over the next few dozen runs (ms); Infinity when it runs at most once. */
export function shortestGapMs(cron: string, timezone: string, from: Date): number {
  const runs = nextCronRuns(cron, timezone, from, 48);
  let gap = Number.POSITIVE_INFINITY;
  for (let i = 1; i < runs.length; i++) gap = Math.min(gap, runs[i]!.getTime() - runs[i - 1]!.getTime());
  return gap;
}

/**
 * Refuses a schedule that runs more often than every `minMinutes` (BAD_USER_INPUT with the fix); the
 * caller decides who is held to it (below ADMIN).
 */
export function checkFrequency(cron: string, timezone: string, minMinutes: number, from: Date): void {
  const gap = shortestGapMs(cron, timezone, from);
  if (gap < minMinutes * 60_000) {
    const every = gap < 60_000 ? `${Math.round(gap / 1000)} s` : `${Math.round(gap / 60_000)} min`;
    throw new UserInputError(
      `The schedule "${cron}" runs every ${every}; beats may run at most every ${minMinutes} minutes below ADMIN. ` +
        `Use e.g. "*/${minMinutes} * * * *" or a less frequent schedule.`,
      'cron',
    );
  }
}

/** A one-shot time must lie ahead. */
export function checkAt(at: Date, now: Date): void {
  if (Number.isNaN(at.getTime())) throw new UserInputError('Invalid one-shot time: give an ISO date-time such as "2030-01-31T07:00:00Z".', 'at');
  if (at.getTime() <= now.getTime()) {
    throw new UserInputError(`The one-shot time ${at.toISOString()} has passed; give a time in the future (ISO, e.g. "2030-01-31T07:00:00Z").`, 'at');
  }
}

/** A cron expression in words ("At 07:00, Monday through Friday"); the expression itself when it cannot be read. */
export function describeCron(cron: string): string {
  try {
    return cronstrue.toString(cron, { use24HourTimeFormat: true, throwExceptionOnParseError: true, verbose: false });
  } catch {
    return cron;
  }
}
