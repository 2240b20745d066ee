import type { Ctx } from '../../common/ctx';
import type { SessionEventPublisher } from '../events';
import type { Session, SessionLifecycleService } from '../sessions';
import type { TurnScheduler } from './turn-scheduler';

/** Why a session rotates; the `reason` of its SessionRotated event. */
export type RotationReason = 'new' | 'daily-reset' | 'idle' | 'compact' | 'context-threshold' | 'context-length' | (string & {});

/**
 * The one place a session rotates (DESIGN §4): `/new`, `newSession`, the daily reset and idle expiry;
 * compaction builds its own successor (seeded with the summary) and announces it here. The running
 * turn is stopped, the session archived and an empty one started with the same key; messages still
 * waiting move to the new session and are answered there; subscribers get SessionRotated.
 */
export class SessionRotation {
  constructor(
    private readonly deps: { lifecycle: SessionLifecycleService; scheduler: TurnScheduler; events: SessionEventPublisher },
  ) {}

  /**
   * Rotates `session`; `rotated` is false when another rotation won a moment earlier (then the key's
   * current session is returned and nothing is announced twice).
   */
  async rotate(ctx: Ctx, session: Session, reason: RotationReason, opts: { stopTurn?: string } = {}): Promise<{ session: Session; rotated: boolean }> {
    if (opts.stopTurn) await this.deps.scheduler.requestAbort(session.id, opts.stopTurn);
    const { session: next, rotated, movedIds } = await this.deps.lifecycle.rotate(ctx, session);
    if (rotated) await this.announce(session, next, reason, movedIds[0] ?? null);
    return { session: next, rotated };
  }

  /** Tells subscribers of `previous` where it continues, and schedules the messages that moved there. */
  async announce(previous: Session, next: Session, reason: RotationReason, firstMovedId: string | null): Promise<void> {
    await this.deps.events.publish(previous.id, { type: 'SessionRotated', previousSessionId: previous.id, newSessionId: next.id, reason });
    if (firstMovedId) await this.deps.scheduler.schedule(next.id, firstMovedId);
  }
}
