import type { Ctx } from './ctx';
import { ForbiddenError } from './errors';
import { TrustLevel, trustAtLeast } from './trust';

/**
 * The trust table of DESIGN §3 for data access, in one place. Services call these where they act, so a
 * resolver that forgets a check still cannot leak data.
 */
export const access = {
  /** Throws unless the actor's trust is at least `min`. */
  requireTrust(ctx: Ctx, min: TrustLevel, what = 'this'): void {
    if (!trustAtLeast(ctx.trust, min)) throw new ForbiddenError(`${min} trust or higher is required for ${what}.`);
  },

  /** ADMIN and above see everyone's data. */
  seesEveryone(ctx: Ctx): boolean {
    return trustAtLeast(ctx.trust, TrustLevel.ADMIN);
  },

  /** Throws unless the actor owns the data (MEMBER and above) or is ADMIN or above. */
  requireOwnOrAdmin(ctx: Ctx, ownerUserId: string | null, what = 'this'): void {
    if (access.seesEveryone(ctx)) return;
    if (!trustAtLeast(ctx.trust, TrustLevel.MEMBER) || !ownerUserId || ctx.userId !== ownerUserId) {
      throw new ForbiddenError(`You may only access your own ${what}.`);
    }
  },

  /** Highest level the actor may grant: OWNER grants anything, ADMIN up to TRUSTED, others nothing. */
  maxGrantable(ctx: Ctx): TrustLevel | null {
    if (trustAtLeast(ctx.trust, TrustLevel.OWNER)) return TrustLevel.OWNER;
    if (trustAtLeast(ctx.trust, TrustLevel.ADMIN)) return TrustLevel.TRUSTED;
    return null;
  },

  /** Throws unless the actor may give `level` to a user who currently has `current` (null: new user). */
  requireMayGrant(ctx: Ctx, level: TrustLevel, current: TrustLevel | null): void {
    const max = access.maxGrantable(ctx);
    if (!max) throw new ForbiddenError('ADMIN trust or higher is required to manage users.');
    if (!trustAtLeast(max, level)) throw new ForbiddenError(`Only an OWNER may grant ${level}; you may grant up to ${max}.`);
    if (current && !trustAtLeast(max, current)) {
      throw new ForbiddenError(`Only an OWNER may change the trust of a ${current}.`);
    }
  },
};
