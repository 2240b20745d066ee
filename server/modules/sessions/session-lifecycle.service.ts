import { SYSTEM_CLOCK, type Clock } from '../../common/clock';
import type { Ctx } from '../../common/ctx';
import type { Db } from '../../persistence/db';
import { selectPlain } from '../../persistence/plain-select';
import { In } from 'typeorm';
import { Message } from './message.entity';
import { Session } from './session.entity';
import { ChatKind, MessageRole, MessageStatus, SessionStatus } from './session.types';

export interface SessionAttrs {
  key: string;
  userId: string | null;
  channel: string;
  chatId: string | null;
  chatKind: ChatKind;
}

/** Finding, creating and rotating sessions. Callers check visibility first. */
export class SessionLifecycleService {
  constructor(
    private readonly db: Db,
    /** Times of starts, ends and activity; tests move it forward. */
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** The ACTIVE session of a key, created when there is none. */
  async resolveActive(ctx: Ctx, attrs: SessionAttrs): Promise<Session> {
    // The usual case, a session that exists, is one plain read without a transaction (on SQLite that
    // takes the write lock).
    const found = await selectPlain(this.db.repo(ctx, Session), [{ key: attrs.key, status: SessionStatus.ACTIVE }], { order: 'DESC', limit: 1 });
    if (found?.[0]) return found[0];
    return this.db.withTransaction(ctx, async (tx) => {
      const repo = this.db.repo(tx, Session);
      const active = () =>
        repo.findOne({ where: { key: attrs.key, status: SessionStatus.ACTIVE }, order: { id: 'DESC' } });
      const existing = await active();
      if (existing) return existing;
      // Two first messages of a chat arriving at once must land in one session, not create one each.
      await this.db.lockName(tx, `session:${attrs.key}`);
      const created = await active();
      if (created) return created;
      const now = this.clock.now();
      return repo.save(
        repo.create({
          ...attrs,
          status: SessionStatus.ACTIVE,
          startedAt: now,
          lastActivityAt: now,
          endedAt: null,
          previousSessionId: null,
        }),
      );
    });
  }

  /**
   * Archives a session and starts an empty one with the same key; returns the new one. Messages still
   * waiting for an answer (QUEUED) move to the new session in the same transaction, so they are answered
   * there. When the session was archived meanwhile (two rotations racing), the key's current ACTIVE
   * session is returned instead, with nothing moved. Says whether this call rotated and which waiting
   * messages moved (oldest first).
   */
  async rotate(
    ctx: Ctx,
    session: Session,
  ): Promise<{ session: Session; rotated: boolean; movedIds: string[] }> {
    return this.db.withTransaction(ctx, async (tx) => {
      const repo = this.db.repo(tx, Session);
      const now = this.clock.now();
      const archived = await repo.update(
        { id: session.id, status: SessionStatus.ACTIVE },
        { status: SessionStatus.ARCHIVED, endedAt: now, updatedAt: now },
      );
      if (!archived.affected) {
        const current = await repo.findOne({
          where: { key: session.key, status: SessionStatus.ACTIVE },
          order: { id: 'DESC' },
        });
        if (current) return { session: current, rotated: false, movedIds: [] };
      }
      const messages = this.db.repo(tx, Message);
      const waiting = await messages.find({
        where: { sessionId: session.id, role: MessageRole.USER, status: MessageStatus.QUEUED },
        order: { id: 'ASC' },
        select: { id: true },
      });
      const next = await repo.save(
        repo.create({ ...successorOf(session, now), messageCount: waiting.length }),
      );
      if (waiting.length) await messages.update({ id: In(waiting.map((m) => m.id)) }, { sessionId: next.id });
      return { session: next, rotated: true, movedIds: waiting.map((m) => m.id) };
    });
  }

  /** Adds to the message and token counters and refreshes lastActivityAt. */
  async recordActivity(
    ctx: Ctx,
    sessionId: string,
    delta: {
      messages?: number;
      inputTokens?: number;
      outputTokens?: number;
      cacheReadTokens?: number;
      cacheWriteTokens?: number;
    },
  ): Promise<void> {
    await this.db.update(
      ctx,
      Session,
      { id: sessionId },
      { lastActivityAt: this.clock.now(), updatedAt: new Date() },
      {
        messageCount: Math.trunc(delta.messages ?? 0),
        inputTokens: Math.trunc(delta.inputTokens ?? 0),
        outputTokens: Math.trunc(delta.outputTokens ?? 0),
        cacheReadTokens: Math.trunc(delta.cacheReadTokens ?? 0),
        cacheWriteTokens: Math.trunc(delta.cacheWriteTokens ?? 0),
      },
    );
  }
}

/** The fields of the ACTIVE session that follows `session` (same key, user, chat), started at `now`. */
export function successorOf(session: Session, now: Date): Partial<Session> {
  return {
    key: session.key,
    userId: session.userId,
    channel: session.channel,
    chatId: session.chatId,
    chatKind: session.chatKind,
    status: SessionStatus.ACTIVE,
    startedAt: now,
    lastActivityAt: now,
    endedAt: null,
    previousSessionId: session.id,
  };
}
