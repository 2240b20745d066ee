import { In, IsNull, LessThan, MoreThan } from 'typeorm';
import { SYSTEM_CLOCK, type Clock } from '../../common/clock';
import type { Ctx } from '../../common/ctx';
import type { Db } from '../../persistence/db';
import type { SessionEventPublisher } from '../events';
import { Image } from './image.entity';
import { Message } from './message.entity';
import { Session } from './session.entity';
import type { SessionService } from './session.service';
import { SessionStatus } from './session.types';

/** Port: stops a session's running turn (the turn scheduler). */
export interface TurnStopper {
  requestAbort(sessionId: string, reason: string): Promise<boolean>;
}

/** One line of `exportSession`: a message without image bytes. */
export interface ExportedMessage {
  id: string;
  sessionId: string;
  role: string;
  status: string;
  content: string;
  createdAt: string;
  userId: string | null;
  turnId: string | null;
  replyToId: string | null;
  toolCalls: unknown;
  toolCallId: string | null;
  inputTokens: number;
  outputTokens: number;
  /** Attachments of the message: metadata only (the base64 stays in the database). */
  images: Array<{ id: string; mimeType: string; bytes: number }>;
}

const PRUNE_BATCH = 200;
const EXPORT_PAGE = 500;

/** Decoded size of base64 text. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * Archiving, deleting, exporting and pruning sessions (DESIGN §4). Archived sessions stay readable and
 * exportable until `session.retention_days` after their last activity; then the maintenance job prunes
 * them with their messages and images. Memories written from a session outlive it.
 */
export class SessionMaintenanceService {
  constructor(
    private readonly db: Db,
    private readonly sessions: SessionService,
    private readonly turns: TurnStopper,
    private readonly events: SessionEventPublisher,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** Archives a visible session (stopping its turn); the next message of its key starts a new one. */
  async archive(ctx: Ctx, id: string): Promise<Session> {
    const session = await this.sessions.getVisible(ctx, id);
    if (session.status === SessionStatus.ARCHIVED) return session;
    await this.turns.requestAbort(session.id, 'the session was archived');
    const now = this.clock.now();
    await this.db
      .repo(ctx, Session)
      .update(
        { id: session.id, status: SessionStatus.ACTIVE },
        { status: SessionStatus.ARCHIVED, endedAt: now, updatedAt: now },
      );
    await this.events.publish(session.id, {
      type: 'Notice',
      level: 'info',
      text: 'This session was archived.',
    });
    return this.db.repo(ctx, Session).findOneByOrFail({ id: session.id });
  }

  /** Deletes a visible session with its messages and images (stopping its turn first). */
  async remove(ctx: Ctx, id: string): Promise<boolean> {
    const session = await this.sessions.getVisible(ctx, id);
    await this.turns.requestAbort(session.id, 'the session was deleted');
    await this.db.repo(ctx, Session).delete({ id: session.id });
    ctx.logger.info({ sessionId: session.id }, 'session deleted');
    return true;
  }

  /** The transcript of a visible session (ACTIVE or ARCHIVED) as JSON Lines, one message per line, oldest first. */
  async exportJsonl(ctx: Ctx, id: string): Promise<string> {
    const session = await this.sessions.getVisible(ctx, id);
    const lines: string[] = [];
    let afterId = '';
    for (;;) {
      const page = await this.db.repo(ctx, Message).find({
        where: afterId ? { sessionId: session.id, id: MoreThan(afterId) } : { sessionId: session.id },
        order: { id: 'ASC' },
        take: EXPORT_PAGE,
      });
      if (!page.length) break;
      const images = await this.db
        .repo(ctx, Image)
        .find({ where: { messageId: In(page.map((m) => m.id)) }, order: { id: 'ASC' } });
      for (const m of page)
        lines.push(
          JSON.stringify(
            this.exported(
              m,
              images.filter((i) => i.messageId === m.id),
            ),
          ),
        );
      afterId = page[page.length - 1]!.id;
      if (page.length < EXPORT_PAGE) break;
    }
    return lines.length ? `${lines.join('\n')}\n` : '';
  }

  private exported(m: Message, images: Image[]): ExportedMessage {
    return {
      id: m.id,
      sessionId: m.sessionId,
      role: m.role,
      status: m.status,
      content: m.content,
      createdAt: m.createdAt.toISOString(),
      userId: m.userId,
      turnId: m.turnId,
      replyToId: m.replyToId,
      toolCalls: m.toolCalls ?? null,
      toolCallId: m.toolCallId,
      inputTokens: m.inputTokens,
      outputTokens: m.outputTokens,
      images: images.map((i) => ({ id: i.id, mimeType: i.mimeType, bytes: base64Bytes(i.dataBase64) })),
    };
  }

  /**
   * Deletes ARCHIVED sessions whose last activity and end are both older than `retentionDays` (with
   * their messages and images); returns how many. ACTIVE sessions are never pruned.
   */
  async pruneArchived(ctx: Ctx, retentionDays: number): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - retentionDays * 86_400_000);
    const repo = this.db.repo(ctx, Session);
    let pruned = 0;
    for (;;) {
      const stale = await repo.find({
        select: { id: true },
        where: [
          { status: SessionStatus.ARCHIVED, lastActivityAt: LessThan(cutoff), endedAt: LessThan(cutoff) },
          { status: SessionStatus.ARCHIVED, lastActivityAt: LessThan(cutoff), endedAt: IsNull() },
        ],
        order: { id: 'ASC' },
        take: PRUNE_BATCH,
      });
      if (!stale.length) break;
      await repo.delete({ id: In(stale.map((s) => s.id)), status: SessionStatus.ARCHIVED });
      pruned += stale.length;
      if (stale.length < PRUNE_BATCH) break;
    }
    if (pruned) ctx.logger.info({ pruned, retentionDays }, 'pruned archived sessions');
    return pruned;
  }
}
