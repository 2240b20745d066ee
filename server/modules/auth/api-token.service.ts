import { IsNull } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import { ForbiddenError, NotFoundError, UserInputError } from '../../common/errors';
import { generateToken, hashToken } from '../../common/tokens';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../audit';
import { access } from '../users';
import { User } from '../users';
import type { UserService } from '../users';
import { ApiToken } from './api-token.entity';
import { VerifiedTokens, type VerifiedToken } from './verified-tokens';

/** Result of creating a token: the secret is returned this once and never stored. */
export interface CreatedToken {
  token: string;
  apiToken: ApiToken;
}

/** Longest token name (the column holds 100 characters). */
export const MAX_TOKEN_NAME_CHARS = 100;

/** How often a token's lastUsedAt is refreshed at most. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** A date column read with raw SQL: a Date on PostgreSQL, TypeORM's UTC text on SQLite. */
function dbDate(value: string | Date | null | undefined): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(' ', 'T')}Z`);
}

function copyDate(value: Date | null): Date | null {
  return value ? new Date(value.getTime()) : null;
}

/** API tokens: creation (shown once), verification by hash, revocation. */
export class ApiTokenService {
  private readonly verified: VerifiedTokens;
  private readonly usersGeneration: () => number;

  constructor(
    private readonly db: Db,
    private readonly users: UserService,
    private readonly audit: AuditService,
  ) {
    // A copy is current until a user, token or budget changes in any process (see ChangeFeed).
    this.usersGeneration = db.changes.generationOf('users');
    this.verified = new VerifiedTokens(this.usersGeneration);
  }

  /** Creates a token for `userId`: MEMBER and above for themselves, OWNER for anyone. */
  async create(ctx: Ctx, userId: string, name: string): Promise<CreatedToken> {
    const cleanName = name.trim();
    if (!cleanName) throw new UserInputError('name must not be empty.', 'name');
    if (cleanName.length > MAX_TOKEN_NAME_CHARS) throw new UserInputError(`name must be at most ${MAX_TOKEN_NAME_CHARS} characters.`, 'name');
    if (ctx.userId !== userId && !trustAtLeast(ctx.trust, TrustLevel.OWNER)) {
      throw new ForbiddenError('Only an OWNER may create tokens for other users.');
    }
    access.requireTrust(ctx, TrustLevel.MEMBER, 'API tokens');
    return this.db.withTransaction(ctx, async (tx) => {
      await this.users.get(tx, userId);
      const token = generateToken();
      const repo = this.db.repo(tx, ApiToken);
      const apiToken = await repo.save(
        repo.create({ userId, name: cleanName, tokenHash: hashToken(token), prefix: token.slice(0, 10), lastUsedAt: null, revokedAt: null }),
      );
      await this.audit.record(tx, 'token.create', { type: 'ApiToken', id: apiToken.id }, { userId, name: cleanName });
      return { token, apiToken };
    });
  }

  /** Revokes a token: its owner or an OWNER. Revoking twice is harmless. */
  async revoke(ctx: Ctx, id: string): Promise<ApiToken> {
    return this.db.withTransaction(ctx, async (tx) => {
      const repo = this.db.repo(tx, ApiToken);
      const token = await repo.findOneBy({ id });
      if (!token) throw new NotFoundError('ApiToken', id);
      if (token.userId !== tx.userId && !trustAtLeast(tx.trust, TrustLevel.OWNER)) {
        throw new ForbiddenError('Only an OWNER may revoke tokens of other users.');
      }
      access.requireTrust(tx, TrustLevel.MEMBER, 'API tokens');
      if (!token.revokedAt) {
        token.revokedAt = new Date();
        await repo.save(token);
        this.db.changed(tx, 'users');
        await this.audit.record(tx, 'token.revoke', { type: 'ApiToken', id }, { userId: token.userId });
      }
      return token;
    });
  }

  /** Tokens of a user (without secrets). */
  listForUser(ctx: Ctx, userId: string): Promise<ApiToken[]> {
    access.requireOwnOrAdmin(ctx, userId, 'API tokens');
    return this.db.repo(ctx, ApiToken).find({ where: { userId }, order: { id: 'ASC' } });
  }

  /** The user of a token as it is now, or null when the token was revoked or the user is gone. */
  async currentUser(ctx: Ctx, tokenId: string): Promise<User | null> {
    const apiToken = await this.db.repo(ctx, ApiToken).findOneBy({ id: tokenId, revokedAt: IsNull() });
    return apiToken ? this.db.repo(ctx, User).findOneBy({ id: apiToken.userId }) : null;
  }

  /**
   * The user and token behind a bearer token, or null when it is unknown or revoked. A token verified a
   * moment ago is answered from this process's memory (see VerifiedTokens): a revocation or a trust change
   * made in any process applies to the next request once announced (ChangeFeed), within a second at most.
   */
  async verify(ctx: Ctx, token: string): Promise<{ user: User; apiToken: ApiToken } | null> {
    if (!token) return null;
    const hash = hashToken(token);
    // Inside a transaction the caller may have changed the rows: read them.
    const cached = ctx.manager ? null : this.verified.get(hash);
    let found = cached;
    if (!found) {
      const generation = this.usersGeneration();
      found = await this.read(ctx, hash);
      if (!found) {
        this.verified.delete(hash);
        return null;
      }
      if (!ctx.manager) this.verified.set(hash, found, generation);
    }
    const apiToken = Object.assign(new ApiToken(), {
      id: found.tokenId,
      userId: found.userId,
      name: found.name,
      tokenHash: found.tokenHash,
      prefix: found.prefix,
      lastUsedAt: copyDate(found.lastUsedAt),
      revokedAt: null,
      createdAt: copyDate(found.tokenCreatedAt),
      updatedAt: copyDate(found.tokenUpdatedAt),
    });
    const user = Object.assign(new User(), { id: found.userId, displayName: found.displayName, trust: found.trust, createdAt: copyDate(found.userCreatedAt), updatedAt: copyDate(found.userUpdatedAt) });
    const now = Date.now();
    if (!found.lastUsedAt || now - found.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      found.lastUsedAt = new Date(now);
      await this.db.repo(ctx, ApiToken).update({ id: apiToken.id }, { lastUsedAt: new Date(now) });
    }
    return { user, apiToken };
  }

  /** The unrevoked token with this hash joined with its user: one statement, no query building. */
  private async read(ctx: Ctx, hash: string): Promise<VerifiedToken | null> {
    const param = this.db.kind === 'postgres' ? '$1' : '?';
    const [row] = (await this.db.repo(ctx, ApiToken).query(
      `SELECT t.id AS "tokenId", t."userId", t.name, t."tokenHash", t.prefix, t."lastUsedAt", t."createdAt" AS "tokenCreatedAt", t."updatedAt" AS "tokenUpdatedAt", ` +
        `u."displayName", u.trust, u."createdAt" AS "userCreatedAt", u."updatedAt" AS "userUpdatedAt" ` +
        `FROM api_tokens t JOIN users u ON u.id = t."userId" WHERE t."tokenHash" = ${param} AND t."revokedAt" IS NULL`,
      [hash],
    )) as Array<Record<string, string | Date | null>>;
    if (!row) return null;
    return {
      tokenId: row.tokenId as string,
      userId: row.userId as string,
      name: row.name as string,
      tokenHash: row.tokenHash as string,
      prefix: row.prefix as string,
      lastUsedAt: dbDate(row.lastUsedAt),
      tokenCreatedAt: dbDate(row.tokenCreatedAt),
      tokenUpdatedAt: dbDate(row.tokenUpdatedAt),
      displayName: row.displayName as string,
      trust: row.trust as TrustLevel,
      userCreatedAt: dbDate(row.userCreatedAt),
      userUpdatedAt: dbDate(row.userUpdatedAt),
    };
  }
}
