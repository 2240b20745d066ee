import { SYSTEM_CLOCK, type Clock } from '../../common/clock';
import type { Ctx } from '../../common/ctx';
import { localTimeZone, wallClock, zonedHour } from '../../common/time-zone';
import type { Session } from './session.entity';
import { SessionStatus } from './session.types';

/** Port: rotates a session (the conversation module's SessionRotation). */
export interface SessionRotator {
  rotate(ctx: Ctx, session: Session, reason: string): Promise<{ session: Session; rotated: boolean }>;
}

/** `session.daily_reset_hour` and `session.idle_minutes`; null turns a rule off. */
export interface SessionExpiryRules {
  /** Hour of the day (in `timeZone`) at which sessions go stale daily. */
  dailyResetHour: number | null;
  /** IANA time zone of the daily reset. @default the server's */
  timeZone?: string | null;
  idleMinutes: number | null;
}

export type ExpiryReason = 'daily-reset' | 'idle';

/** The most recent daily reset instant at or before `now`: `hour`:00 on the wall clock of `timeZone`. */
export function lastDailyReset(now: Date, hour: number, timeZone: string = localTimeZone()): Date {
  const today = wallClock(now, timeZone);
  const reset = zonedHour(today.year, today.month, today.day, hour, timeZone);
  return reset.getTime() <= now.getTime()
    ? reset
    : zonedHour(today.year, today.month, today.day - 1, hour, timeZone);
}

/**
 * Why a session is stale at `now`, or null. Idle: no activity for `idleMinutes`. Daily reset: the last
 * activity was before the most recent reset hour (so a conversation does not carry over a reset).
 */
export function expiryReason(
  session: Pick<Session, 'lastActivityAt'>,
  now: Date,
  rules: SessionExpiryRules,
): ExpiryReason | null {
  const last = session.lastActivityAt.getTime();
  if (rules.idleMinutes !== null && now.getTime() - last >= rules.idleMinutes * 60_000) return 'idle';
  if (
    rules.dailyResetHour !== null &&
    last < lastDailyReset(now, rules.dailyResetHour, rules.timeZone ?? localTimeZone()).getTime()
  )
    return 'daily-reset';
  return null;
}

const NOTICES: Record<ExpiryReason, (rules: SessionExpiryRules) => string> = {
  'daily-reset': (r) =>
    `🌅 A new session started: sessions reset daily at ${String(r.dailyResetHour).padStart(2, '0')}:00 (${r.timeZone ?? localTimeZone()}), and the previous one is archived.`,
  idle: (r) =>
    `💤 A new session started: the previous one was idle for over ${r.idleMinutes} minutes and is archived.`,
};

/**
 * Session lifecycle rules applied when a message arrives (DESIGN §4): a stale ACTIVE session is archived
 * and a new one started before the message goes in, and the sender is told. Both rules are off by default.
 */
export class SessionExpiryService {
  constructor(
    private readonly rotation: SessionRotator,
    private readonly rules: () => SessionExpiryRules,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /**
   * Rotates `session` when it is stale; returns the session to use and the one-line notice for the
   * sender (null when another message rotated it a moment earlier and its sender is told), else null.
   */
  async refresh(ctx: Ctx, session: Session): Promise<{ session: Session; notice: string | null } | null> {
    if (session.status !== SessionStatus.ACTIVE) return null;
    const rules = this.rules();
    const reason = expiryReason(session, this.clock.now(), rules);
    if (!reason) return null;
    const { session: next, rotated } = await this.rotation.rotate(ctx, session, reason);
    if (!rotated) return { session: next, notice: null };
    ctx.logger.info(
      { sessionId: session.id, newSessionId: next.id, reason },
      'session expired; started a new one',
    );
    return { session: next, notice: NOTICES[reason](rules) };
  }
}
