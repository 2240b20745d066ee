import type { FindOptionsWhere } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import type { Page, PageArgs } from '../../common/pagination';
import { TrustLevel } from '../../common/trust';
import { findPage } from '../../persistence/paginate';
import { access } from '../../common/access';
import type { Db } from '../../persistence/db';
import { AuditEntry } from './audit-entry.entity';

export interface AuditTarget {
  type: string;
  id: string;
}

/** Writes the audit log: trust changes, tokens, pairing, approvals and refused tool calls. */
export class AuditService {
  constructor(private readonly db: Db) {}

  async record(ctx: Ctx, action: string, target?: AuditTarget | null, details?: Record<string, unknown>): Promise<AuditEntry> {
    const repo = this.db.repo(ctx, AuditEntry);
    const actor = ctx.actor;
    const entry = repo.create({
      actorUserId: actor.kind === 'user' ? actor.userId : null,
      actor: actor.kind === 'system' ? `system:${actor.reason}` : actor.kind,
      action,
      targetType: target?.type ?? null,
      targetId: target?.id ?? null,
      details: details ?? null,
    });
    const saved = await repo.save(entry);
    ctx.logger.info({ audit: action, target: target ?? undefined }, 'audit');
    return saved;
  }

  /** Newest entries first; ADMIN and above. */
  list(ctx: Ctx, filter: { action?: string | null; actorUserId?: string | null }, page: PageArgs): Promise<Page<AuditEntry>> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'the audit log');
    const where: FindOptionsWhere<AuditEntry> = {};
    if (filter.action) where.action = filter.action;
    if (filter.actorUserId) where.actorUserId = filter.actorUserId;
    return findPage(this.db.repo(ctx, AuditEntry), where, page, 'DESC');
  }
}
