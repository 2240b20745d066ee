import type { FindOptionsWhere } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import { ForbiddenError, NotFoundError } from '../../common/errors';
import type { Page, PageArgs } from '../../common/pagination';
import { TrustLevel } from '../../common/trust';
import type { Db } from '../../persistence/db';
import { findPage } from '../../persistence/paginate';
import { selectPlain } from '../../persistence/plain-select';
import { access } from '../users';
import { Message } from './message.entity';
import { Session } from './session.entity';
import { MessageRole, type SessionStatus } from './session.types';

export interface SessionFilter {
  userId?: string | null;
  status?: SessionStatus | null;
  channel?: string | null;
  key?: string | null;
}

export interface SessionReadOptions {
  withUsers?: boolean;
  fields?: readonly string[] | null;
  userFields?: readonly string[] | null;
  /** false: the caller does not show totalCount, which is then not counted (NaN). @default true */
  count?: boolean;
}

/** Reading sessions and their messages, within what the actor may see (DESIGN §3 isolation). */
export class SessionService {
  constructor(private readonly db: Db) {}

  async findOne(ctx: Ctx, id: string): Promise<Session | null> {
    const repo = this.db.repo(ctx, Session);
    const found = await selectPlain(repo, [{ id }], { limit: 1 });
    return found ? (found[0] ?? null) : repo.findOneBy({ id });
  }

  /** A session the actor may read: their own, or any for ADMIN and above; else NOT_FOUND / FORBIDDEN. */
  async getVisible(ctx: Ctx, id: string): Promise<Session> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'sessions');
    const session = await this.findOne(ctx, id);
    if (!session) throw new NotFoundError('Session', id);
    if (!access.seesEveryone(ctx) && session.userId !== ctx.userId) {
      throw new ForbiddenError('You may only read your own sessions.');
    }
    return session;
  }

  /**
   * A page of the sessions the actor may see, newest first. `withUsers` loads each one's user with it;
   * `fields` and `userFields` (property names) read only those (see selectPlain), for a caller that
   * uses no others.
   */
  findMany(
    ctx: Ctx,
    filter: SessionFilter,
    page: PageArgs,
    options: SessionReadOptions = {},
  ): Promise<Page<Session>> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'sessions');
    const where: FindOptionsWhere<Session> = {};
    if (access.seesEveryone(ctx)) {
      if (filter.userId) where.userId = filter.userId;
    } else {
      if (filter.userId && filter.userId !== ctx.userId)
        throw new ForbiddenError('You may only list your own sessions.');
      where.userId = ctx.userId!;
    }
    if (filter.status) where.status = filter.status;
    if (filter.channel) where.channel = filter.channel;
    if (filter.key) where.key = filter.key;
    return findPage(this.db.repo(ctx, Session), where, page, 'DESC', {
      join: options.withUsers ? 'user' : undefined,
      columns: options.fields ?? undefined,
      joinColumns: options.userFields ?? undefined,
      count: options.count,
    });
  }

  /** Messages of a visible session, oldest first. */
  async messages(ctx: Ctx, sessionId: string, page: PageArgs): Promise<Page<Message>> {
    await this.getVisible(ctx, sessionId);
    return findPage(this.db.repo(ctx, Message), { sessionId }, page, 'ASC');
  }

  /**
   * A short title for a session: its first user message, on one line and cut at `maxChars` (null when the
   * session has no user message yet). The caller has already checked that the session is visible.
   */
  async title(ctx: Ctx, sessionId: string, maxChars = 80): Promise<string | null> {
    const first = await this.db
      .repo(ctx, Message)
      .findOne({
        select: { content: true },
        where: { sessionId, role: MessageRole.USER },
        order: { createdAt: 'ASC' },
      });
    if (!first) return null;
    const line = first.content.replace(/\s+/g, ' ').trim();
    return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line;
  }
}
