import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Ctx } from '../../common/ctx';
import { TrustLevel } from '../../common/trust';
import type { UserService } from '../users';
import type { ApiTokenService } from './api-token.service';

/** File name of the owner token inside the data folder. */
export const OWNER_TOKEN_FILE = 'owner.token';

/**
 * On first start (no OWNER yet) creates the OWNER user and writes its API token to
 * `<data>/owner.token` with mode 0600. Later starts leave everything as it is.
 */
export class OwnerBootstrap {
  constructor(
    private readonly users: UserService,
    private readonly tokens: ApiTokenService,
    private readonly dataDir: string,
  ) {}

  async ensureOwner(ctx: Ctx): Promise<{ created: boolean; tokenFile: string; ownerId: string }> {
    const tokenFile = path.join(this.dataDir, OWNER_TOKEN_FILE);
    const existing = await this.users.findOwner(ctx);
    if (existing) return { created: false, tokenFile, ownerId: existing.id };
    const owner = await this.users.create(ctx, { displayName: 'Owner', trust: TrustLevel.OWNER });
    const { token } = await this.tokens.create(ctx, owner.id, 'owner (first start)');
    mkdirSync(this.dataDir, { recursive: true });
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    chmodSync(tokenFile, 0o600);
    ctx.logger.info({ tokenFile }, `Created the OWNER user; its API token is in ${tokenFile} (mode 0600)`);
    return { created: true, tokenFile, ownerId: owner.id };
  }

  tokenFileExists(): boolean {
    return existsSync(path.join(this.dataDir, OWNER_TOKEN_FILE));
  }
}
