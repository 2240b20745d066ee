import type { AuthChecker } from 'type-graphql';
import { ForbiddenError, UnauthenticatedError } from '../common/errors';
import { TrustLevel, trustAtLeast } from '../common/trust';
import type { GraphQLContext } from './context';

/**
 * `@Authorized(TrustLevel.X)` means "trust X or higher". Anonymous callers get UNAUTHENTICATED, BLOCKED
 * users and callers below the level get FORBIDDEN. Finer rules (own data vs everyone's) live in services.
 */
export const authChecker: AuthChecker<GraphQLContext, TrustLevel> = ({ context }, roles) => {
  const { ctx } = context;
  if (ctx.actor.kind !== 'user') throw new UnauthenticatedError(context.authError);
  const min = roles[0] ?? TrustLevel.GUEST;
  if (ctx.trust === TrustLevel.BLOCKED) throw new ForbiddenError('This user is BLOCKED.');
  if (!trustAtLeast(ctx.trust, min)) throw new ForbiddenError(`${min} trust or higher is required; you are ${ctx.trust}.`);
  return true;
};
