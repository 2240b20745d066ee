import type { FindOptionsWhere } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import { ConflictError, ForbiddenError, NotFoundError, UserInputError } from '../../common/errors';
import type { Page, PageArgs } from '../../common/pagination';
import { TrustLevel } from '../../common/trust';
import type { Db } from '../../persistence/db';
import { findPage } from '../../persistence/paginate';
import type { AuditService } from '../audit';
import { access } from '../users';
import { User } from '../users';
import { Memory } from './memory.entity';
import type { MemoryIndexHook } from './memory-indexer';
import { MemoryScope, MemoryType } from './memory.types';

export const MAX_MEMORY_CHARS = 20_000;

export interface MemoryFilter {
  type?: MemoryType | null;
  scope?: MemoryScope | null;
  userId?: string | null;
  groupId?: string | null;
}

export interface CreateMemoryInput {
  content: string;
  type?: MemoryType | null;
  scope?: MemoryScope | null;
  userId?: string | null;
  groupId?: string | null;
  importance?: number | null;
  sourceSessionId?: string | null;
}

export interface UpdateMemoryInput {
  content?: string | null;
  type?: MemoryType | null;
  importance?: number | null;
}

function checkContent(content: string): string {
  const text = content.trim();
  if (!text) throw new UserInputError('content must not be empty.', 'content');
  if (text.length > MAX_MEMORY_CHARS) throw new UserInputError(`content must be at most ${MAX_MEMORY_CHARS} characters.`, 'content');
  return text;
}

function checkImportance(value: number | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (!(value >= 0 && value <= 1)) throw new UserInputError('importance must be between 0 and 1.', 'importance');
  return value;
}

/**
 * Long-term memories: CRUD with the scope rules of DESIGN §3 (own, group, global). Every change is passed
 * on to the search index (`index`), so searches and recall see it at once.
 */
export class MemoryService {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
    private readonly index: MemoryIndexHook | null = null,
  ) {}

  /** What a MEMBER may read: their own user-scoped memories and global ones. */
  private visibleWhere(ctx: Ctx, filter: MemoryFilter): FindOptionsWhere<Memory>[] {
    const base: FindOptionsWhere<Memory> = {};
    if (filter.type) base.type = filter.type;
    if (access.seesEveryone(ctx)) {
      if (filter.scope) base.scope = filter.scope;
      if (filter.userId) base.userId = filter.userId;
      if (filter.groupId) base.groupId = filter.groupId;
      return [base];
    }
    if (filter.userId && filter.userId !== ctx.userId) throw new ForbiddenError('You may only read your own memories.');
    const own = { ...base, scope: MemoryScope.USER, userId: ctx.userId! };
    const global = { ...base, scope: MemoryScope.GLOBAL };
    if (filter.scope === MemoryScope.USER) return [own];
    if (filter.scope === MemoryScope.GLOBAL) return [global];
    if (filter.scope === MemoryScope.GROUP) throw new ForbiddenError('Group memories are listed by ADMINs only.');
    return [own, global];
  }

  findMany(ctx: Ctx, filter: MemoryFilter, page: PageArgs): Promise<Page<Memory>> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'memories');
    return findPage(this.db.repo(ctx, Memory), this.visibleWhere(ctx, filter), page, 'DESC');
  }

  /** A memory the actor may change: their own user-scoped one, or any for ADMIN and above. */
  private async getWritable(ctx: Ctx, id: string): Promise<Memory> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'memories');
    const memory = await this.db.repo(ctx, Memory).findOneBy({ id });
    if (!memory) throw new NotFoundError('Memory', id);
    if (!access.seesEveryone(ctx) && !(memory.scope === MemoryScope.USER && memory.userId === ctx.userId)) {
      throw new ForbiddenError('You may only change your own memories.');
    }
    if (memory.source?.startsWith('workspace:')) {
      throw new ConflictError(`This memory is a chunk of the workspace file ${memory.source.slice('workspace:'.length)}; edit the file instead.`);
    }
    return memory;
  }

  async create(ctx: Ctx, input: CreateMemoryInput): Promise<Memory> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'memories');
    const content = checkContent(input.content);
    const scope = input.scope ?? MemoryScope.USER;
    const importance = checkImportance(input.importance) ?? 0.5;
    let userId: string | null = null;
    let groupId: string | null = null;
    switch (scope) {
      case MemoryScope.USER:
        userId = input.userId ?? ctx.userId;
        if (!userId) throw new UserInputError('userId is required for user-scoped memories created by the system.', 'userId');
        if (userId !== ctx.userId) {
          access.requireTrust(ctx, TrustLevel.ADMIN, "other users' memories");
          if (!(await this.db.repo(ctx, User).existsBy({ id: userId }))) throw new NotFoundError('User', userId);
        }
        break;
      case MemoryScope.GROUP:
        access.requireTrust(ctx, TrustLevel.ADMIN, 'group memories');
        groupId = input.groupId?.trim() || null;
        if (!groupId) throw new UserInputError('groupId is required for group-scoped memories.', 'groupId');
        break;
      case MemoryScope.GLOBAL:
        access.requireTrust(ctx, TrustLevel.ADMIN, 'global memories');
        break;
    }
    const created = await this.db.withTransaction(ctx, async (tx) => {
      const repo = this.db.repo(tx, Memory);
      const memory = await repo.save(
        repo.create({
          content,
          type: input.type ?? MemoryType.FACT,
          scope,
          userId,
          groupId,
          importance,
          sourceSessionId: input.sourceSessionId ?? null,
        }),
      );
      await this.auditUnlessOwn(tx, 'memory.create', memory);
      return memory;
    });
    await this.index?.indexed(ctx, [created]);
    return created;
  }

  async update(ctx: Ctx, id: string, input: UpdateMemoryInput): Promise<Memory> {
    const memory = await this.getWritable(ctx, id);
    if (input.content !== undefined && input.content !== null) memory.content = checkContent(input.content);
    if (input.type) memory.type = input.type;
    const importance = checkImportance(input.importance);
    if (importance !== undefined) memory.importance = importance;
    const updated = await this.db.withTransaction(ctx, async (tx) => {
      const saved = await this.db.repo(tx, Memory).save(memory);
      await this.auditUnlessOwn(tx, 'memory.update', saved);
      return saved;
    });
    await this.index?.indexed(ctx, [updated]);
    return updated;
  }

  /** A user writing someone else's, a group's or a global memory is a privileged action: audit it. */
  private async auditUnlessOwn(ctx: Ctx, action: string, memory: Memory): Promise<void> {
    if (ctx.actor.kind !== 'user') return;
    if (memory.scope === MemoryScope.USER && memory.userId === ctx.userId) return;
    await this.audit.record(ctx, action, { type: 'Memory', id: memory.id }, { ownerUserId: memory.userId, scope: memory.scope, groupId: memory.groupId });
  }

  async delete(ctx: Ctx, id: string): Promise<boolean> {
    const memory = await this.getWritable(ctx, id);
    await this.db.repo(ctx, Memory).delete({ id: memory.id });
    await this.index?.removed(ctx, [memory.id]);
    if (memory.userId !== ctx.userId) {
      await this.audit.record(ctx, 'memory.delete', { type: 'Memory', id }, { ownerUserId: memory.userId, scope: memory.scope });
    }
    return true;
  }
}
