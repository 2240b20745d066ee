import { Ctx } from '../common/ctx';
import type { Logger } from '../common/logger';
import type { ApiTokenService } from '../modules/auth';
import type { UserService } from '../modules/users';
import { createLoaders, type GraphQLContext, type GraphQLStreams } from './context';

/** Extracts the token from `Bearer <token>` (or a bare token, for graphql-ws connection params). */
export function parseAuthorization(value: string | undefined): string | null {
  if (!value) return null;
  const trimmed = value.trim();
  const match = /^Bearer\s+(\S+)$/i.exec(trimmed);
  if (match) return match[1]!;
  return /\s/.test(trimmed) ? null : trimmed;
}

/** Builds a GraphQL context: verifies the token and makes a Ctx for its user, or an anonymous one. */
export function createContextFactory(deps: { tokens: ApiTokenService; users: UserService; logger: Logger; streams?: GraphQLStreams }) {
  return async (authorization: string | undefined): Promise<GraphQLContext> => {
    const base: Ctx = new Ctx({ actor: { kind: 'anonymous' }, logger: deps.logger, channel: 'graphql' });
    const token = parseAuthorization(authorization);
    let ctx = base;
    let authError: string | undefined;
    let found: Awaited<ReturnType<ApiTokenService['verify']>> = null;
    if (authorization !== undefined && !token) {
      authError = 'The Authorization header must be "Bearer <token>".';
    } else if (token) {
      found = await deps.tokens.verify(base, token);
      if (found) {
        ctx = new Ctx({
          actor: { kind: 'user', userId: found.user.id, trust: found.user.trust, tokenId: found.apiToken.id },
          logger: deps.logger.child({ userId: found.user.id }),
          requestId: base.requestId,
          channel: 'graphql',
        });
      } else {
        authError = 'The API token is unknown or revoked.';
      }
    }
    return { ctx, loaders: createLoaders(ctx, deps.users), viewer: found?.user, authError, streams: deps.streams };
  };
}
