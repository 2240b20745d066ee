import type { Ctx } from '../../common/ctx';
import { UnauthenticatedError } from '../../common/errors';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../audit';
import { McpCredential, type McpCredentialKind } from './mcp-credential.entity';

/** Seals and opens secrets (the app's SecretBox). */
export interface SecretSealer {
  sealJson(value: unknown): string;
  openJson<T>(sealed: string): T;
}

/** Where secret values are registered so logs never show them (the app's SecretRedactor). */
export interface SecretRegistry {
  add(secret: string | null | undefined): void;
}

/**
 * Users' credentials for MCP servers, sealed at rest. Values are registered with the log redactor when
 * stored or read, and never returned through the API.
 */
export class McpCredentialService {
  constructor(
    private readonly db: Db,
    private readonly box: SecretSealer,
    private readonly redactor: SecretRegistry,
    private readonly audit: AuditService,
  ) {}

  /** The stored value of one user's credential, or null. */
  async read<T>(ctx: Ctx, serverName: string, userId: string, kind: McpCredentialKind): Promise<T | null> {
    const row = await this.db.repo(ctx, McpCredential).findOneBy({ serverName, userId, kind });
    if (!row) return null;
    const value = this.box.openJson<T>(row.sealed);
    this.registerSecrets(value);
    return value;
  }

  /** Stores (replaces) one user's credential. */
  async write(ctx: Ctx, serverName: string, userId: string, kind: McpCredentialKind, value: unknown): Promise<void> {
    this.registerSecrets(value);
    const repo = this.db.repo(ctx, McpCredential);
    const existing = await repo.findOneBy({ serverName, userId });
    const sealed = this.box.sealJson(value);
    if (existing) await repo.update({ id: existing.id }, { sealed, kind, updatedAt: new Date() });
    else await repo.save(repo.create({ serverName, userId, kind, sealed }));
  }

  /** Removes the caller's credential for a server; true when there was one. */
  async deleteOwn(ctx: Ctx, serverName: string): Promise<boolean> {
    const userId = requireUser(ctx);
    const result = await this.db.repo(ctx, McpCredential).delete({ serverName, userId });
    const deleted = (result.affected ?? 0) > 0;
    if (deleted) await this.audit.record(ctx, 'mcp.credential.delete', { type: 'McpServer', id: serverName }, {});
    return deleted;
  }

  /** Servers the user has a credential for. */
  async serversOf(ctx: Ctx, userId: string): Promise<Array<{ serverName: string; kind: McpCredentialKind; updatedAt: Date }>> {
    const rows = await this.db.repo(ctx, McpCredential).find({ where: { userId }, select: { serverName: true, kind: true, updatedAt: true } });
    return rows.map((r) => ({ serverName: r.serverName, kind: r.kind, updatedAt: r.updatedAt }));
  }

  /** Removes every credential of a server (when the server is deleted). */
  async deleteServer(ctx: Ctx, serverName: string): Promise<void> {
    await this.db.repo(ctx, McpCredential).delete({ serverName });
  }

  private registerSecrets(value: unknown): void {
    if (typeof value === 'string') this.redactor.add(value);
    else if (value && typeof value === 'object') for (const v of Object.values(value as Record<string, unknown>)) this.registerSecrets(v);
  }
}

export function requireUser(ctx: Ctx): string {
  const userId = ctx.userId;
  if (!userId) throw new UnauthenticatedError('Sign in with an API token to manage your MCP credentials.');
  return userId;
}
