import type { Ctx } from '../../common/ctx';

/** What one housekeeping run did. */
export interface HousekeepingResult {
  prunedSessions: number;
  expiredApprovals: number;
}

/**
 * Periodic housekeeping (DESIGN §4), run by the `maintenance` queue: prunes archived sessions past
 * `session.retention_days` and denies tool approvals nobody decided in time.
 */
export class HousekeepingService {
  constructor(
    private readonly deps: {
      sessions: { pruneArchived(ctx: Ctx, retentionDays: number): Promise<number> };
      approvals: { expireOverdue(ctx: Ctx): Promise<number> };
      retentionDays: () => number;
    },
  ) {}

  async run(ctx: Ctx): Promise<HousekeepingResult> {
    return {
      prunedSessions: await this.deps.sessions.pruneArchived(ctx, this.deps.retentionDays()),
      expiredApprovals: await this.deps.approvals.expireOverdue(ctx),
    };
  }
}
