import { IsNull } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import { ForbiddenError, NotFoundError, UserInputError } from '../../common/errors';
import { ChangeCache } from '../../common/change-cache';
import { generateToken, hashToken } from '../../common/tokens';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../audit';
import { access } from '../users';
import { User } from '../users';
import type { UserService } from '../users';
import { ApiToken } from './api-token.entity';

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

type TokenRow = Record<string, string | Date | null>;

/** API tokens: creation (shown once), verification by hash, revocation. */
export class ApiTokenService {
  /** Verified tokens by hash (dropped on any change of users, tokens or budgets, in any process). */
  private readonly verified: ChangeCache<TokenRow | null>;

  constructor(
    private readonly db: Db,
    private readonly users: UserService,
    private readonly audit: AuditService,
  ) {
    this.verified = new ChangeCache(db.changes, ['users']);
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
   * The user and token behind a bearer token, or null when it is unknown or revoked. Every request pays
   * this, so the answer is this process's copy while no user, token or budget changed (in any process,
   * see ChangeCache): a revocation or a trust change takes effect at the next request.
   */
  async verify(ctx: Ctx, token: string): Promise<{ user: User; apiToken: ApiToken } | null> {
    if (!token) return null;
    const hash = hashToken(token);
    const row = await this.verified.get(hash, () => this.lookUp(ctx, hash));
    if (!row) return null;
    const apiToken = Object.assign(new ApiToken(), {
      id: row.tokenId,
      userId: row.userId,
      name: row.name,
      tokenHash: row.tokenHash,
      prefix: row.prefix,
      lastUsedAt: dbDate(row.lastUsedAt),
      revokedAt: null,
      createdAt: dbDate(row.tokenCreatedAt),
      updatedAt: dbDate(row.tokenUpdatedAt),
    });
    const user = Object.assign(new User(), { id: row.userId, displayName: row.displayName, trust: row.trust, createdAt: dbDate(row.userCreatedAt), updatedAt: dbDate(row.userUpdatedAt) });
    const now = Date.now();
    if (!apiToken.lastUsedAt || now - apiToken.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      // The copy keeps the time too, so the next requests of this minute write nothing.
      row.lastUsedAt = new Date(now);
      await this.db.repo(ctx, ApiToken).update({ id: apiToken.id }, { lastUsedAt: new Date(now) });
    }
    return { user, apiToken };
  }

  /** One statement: the token joined with its user. */
  private async lookUp(ctx: Ctx, tokenHash: string): Promise<TokenRow | null> {
    const param = this.db.kind === 'postgres' ? '$1' : '?';
    const [row] = (await this.db.repo(ctx, ApiToken).query(
      `SELECT t.id AS "tokenId", t."userId", t.name, t."tokenHash", t.prefix, t."lastUsedAt", t."revokedAt", t."createdAt" AS "tokenCreatedAt", t."updatedAt" AS "tokenUpdatedAt", ` +
        `u."displayName", u.trust, u."createdAt" AS "userCreatedAt", u."updatedAt" AS "userUpdatedAt" ` +
        `FROM api_tokens t JOIN users u ON u.id = t."userId" WHERE t."tokenHash" = ${param} AND t."revokedAt" IS NULL`,
      [tokenHash],
    )) as TokenRow[];
    return row ?? null;
  }
}
