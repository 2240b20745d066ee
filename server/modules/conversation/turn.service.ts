import { In, Not } from 'typeorm';
import { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import { newId } from '../../common/ids';
import type { Db } from '../../persistence/db';
import { selectPlain } from '../../persistence/plain-select';
import type { SessionEventPublisher } from '../events';
import { Image } from '../sessions';
import { Message } from '../sessions';
import { Session } from '../sessions';
import { MessageRole, MessageStatus } from '../sessions';
import type { RunningTurns } from './running-turns';
import type { ClaimedTurn, TurnScheduler } from './turn-scheduler';

export type QueueMode = 'followup' | 'collect' | 'interrupt';

/**
 * Channels whose sessions answer their own instructions outside the turn queue: a beat run stores its
 * instruction and runs it at once in `cron:<beatId>` (its history withheld). The turn queue never drains
 * them: answering such an instruction as a conversation turn (say, one a running beat had just stored
 * when a worker started and recovered pending sessions) would answer it twice, with earlier runs' history.
 */
const SELF_RUN_CHANNELS: readonly string[] = ['cron'];

export interface InboundImage {
  mimeType: string;
  dataBase64: string;
}

export interface SubmitInput {
  text: string;
  images?: InboundImage[];
  /** `channel:chat:platformMessageId`; a second message with the same key is a duplicate. */
  dedupeKey?: string | null;
  /** Set when the text is the transcript of a voice note: its length in seconds. */
  voiceSeconds?: number | null;
  /** The id the turn answering this message gets (webhooks answer it at once); a new one when absent. */
  turnId?: string | null;
}

/** What the sender gets back at once: the stored message and where it stands. */
export interface TurnTicket {
  messageId: string;
  sessionId: string;
  status: MessageStatus;
  duplicate: boolean;
  /** An immediate answer (slash commands, refusals), when there is one. */
  reply?: string | null;
}

/** What a drain did: the turns it ran, and the messages it saw waiting but left for a later drain. */
export interface DrainResult {
  turns: number;
  left: number;
}

/** Port: runs one turn for a batch of inbound messages; the agent loop implements it. */
export interface TurnExecutor {
  runTurn(ctx: Ctx, session: Session, batch: Message[], turnId: string, signal: AbortSignal): Promise<void>;
}

/**
 * Inbound messages become QUEUED rows (the durable per-session mailbox); `drain` runs them as turns in
 * arrival order. The caller of `drain` holds the session's lock, so no two turns of a session overlap.
 */
export class TurnService {
  constructor(
    private readonly db: Db,
    private readonly scheduler: TurnScheduler,
    private readonly events: SessionEventPublisher,
    private readonly running: RunningTurns,
    private readonly queueMode: () => QueueMode,
  ) {}

  /**
   * Stores the message and has its session drained; a duplicate returns the first message. When this
   * process can answer it at once (`TurnScheduler.reserve`), the session's lock is taken before the
   * message is stored, so it is stored as being answered and its turn starts here without a queue hop.
   */
  async submit(ctx: Ctx, session: Session, input: SubmitInput): Promise<TurnTicket> {
    if (input.dedupeKey) {
      const repo = this.db.repo(ctx, Message);
      const plain = await selectPlain(repo, [{ dedupeKey: input.dedupeKey }], { limit: 1, columns: ['sessionId', 'status'] });
      const existing = plain ? (plain[0] ?? null) : await repo.findOneBy({ dedupeKey: input.dedupeKey });
      if (existing) return { messageId: existing.id, sessionId: existing.sessionId, status: existing.status, duplicate: true };
    }
    const reservation = SELF_RUN_CHANNELS.includes(session.channel) ? null : await this.scheduler.reserve(session.id);
    let message: Message;
    let older = 0;
    try {
      ({ message, older } = await this.store(ctx, session, input, reservation ? (input.turnId ?? newId()) : null));
    } catch (err) {
      await reservation?.cancel();
      // Two deliveries of one platform message racing: the unique dedupe key lets exactly one in.
      const dup = input.dedupeKey ? await this.db.repo(ctx, Message).findOneBy({ dedupeKey: input.dedupeKey }) : null;
      if (dup) return { messageId: dup.id, sessionId: dup.sessionId, status: dup.status, duplicate: true };
      throw err;
    }
    const added = this.events.publish(session.id, { type: 'MessageAdded', messageId: message.id, role: message.role, content: message.content, ...(message.voiceSeconds != null ? { voiceSeconds: message.voiceSeconds } : {}) });
    if (reservation && !older) {
      // Started before the event has left, so the turn's start usually leaves with it (events of one tick).
      reservation.run({ session, message, turnId: message.turnId! });
      await added;
      return { messageId: message.id, sessionId: session.id, status: MessageStatus.QUEUED, duplicate: false };
    }
    await added;
    if (reservation) {
      // Older messages wait (a drain is due): this one queues behind them, and the drain starts here.
      await this.db.update(ctx, Message, { id: message.id }, { status: MessageStatus.QUEUED, turnId: input.turnId ?? null });
      reservation.drain();
      return { messageId: message.id, sessionId: session.id, status: MessageStatus.QUEUED, duplicate: false };
    }
    if (this.queueMode() === 'interrupt') await this.scheduler.requestAbort(session.id, 'a newer message arrived', message.id);
    await this.scheduler.schedule(session.id, message.id);
    return { messageId: message.id, sessionId: session.id, status: message.status, duplicate: false };
  }

  /**
   * One row for a message without images, with no transaction around it. `turnId` set: the session is
   * reserved, so the message is stored as being answered by that turn, and the same statement counts the
   * messages of the session that were waiting before it (answered first).
   */
  private async store(ctx: Ctx, session: Session, input: SubmitInput, turnId: string | null): Promise<{ message: Message; older: number }> {
    const run = async (tx: Ctx) => {
      const repo = this.db.repo(tx, Message);
      const row = repo.create({
        sessionId: session.id,
        userId: ctx.userId,
        role: MessageRole.USER,
        content: input.text,
        status: turnId ? MessageStatus.PROCESSING : MessageStatus.QUEUED,
        dedupeKey: input.dedupeKey ?? null,
        turnId: turnId ?? input.turnId ?? null,
        voiceSeconds: input.voiceSeconds ?? null,
      });
      row.id = newId();
      row.createdAt = row.updatedAt = new Date();
      row.hasImages = !!input.images?.length;
      let older = 0;
      if (turnId) {
        const found = await this.db.insertReturning<Message, { older: number | string }>(
          tx,
          Message,
          row,
          (p) =>
            // Only waiting messages count: read through the partial index of those (a handful), not through the
            // session's every message (SQLite, without statistics, would pick the (sessionId, id) index).
            `(SELECT COUNT(*) FROM messages o${this.db.kind === 'sqlite' ? ' INDEXED BY "IDX_messages_pending"' : ''} ` +
            `WHERE o.status IN ('${MessageStatus.QUEUED}', '${MessageStatus.PROCESSING}') AND o."sessionId" = ${p(session.id)} ` +
            `AND o.role = ${p(MessageRole.USER)} AND o.id < ${p(row.id)}) AS older`,
        );
        older = Number(found.older);
      } else {
        // Every column is set here (ids and times by the application): nothing to read back.
        await this.db.insert(tx, Message, row);
      }
      if (input.images?.length) {
        const images = this.db.repo(tx, Image);
        await images.save(input.images.map((img) => images.create({ messageId: row.id, mimeType: img.mimeType, dataBase64: img.dataBase64 })));
      }
      return { message: row, older };
    };
    return input.images?.length ? this.db.withTransaction(ctx, run) : run(ctx);
  }

  /** Messages still waiting (or left PROCESSING by a crashed worker), oldest first. */
  pending(ctx: Ctx, sessionId: string): Promise<Message[]> {
    return this.db.repo(ctx, Message).find({
      where: { sessionId, role: MessageRole.USER, status: In([MessageStatus.QUEUED, MessageStatus.PROCESSING]) },
      order: { id: 'ASC' },
    });
  }

  /** Schedules every session that still has pending messages (worker start, after a crash). */
  async recoverPending(logger: Logger): Promise<number> {
    const ids = await this.pendingSessions(Ctx.system(logger, 'recover'), null);
    for (const sessionId of ids) await this.scheduler.schedule(sessionId, 'recover');
    if (ids.length) logger.info({ sessions: ids.length }, 'rescheduled sessions with pending messages');
    return ids.length;
  }

  /**
   * The safety net of turns answered where their message was stored (no queue job stands for them): a
   * session with a message waiting longer than `olderThanMs` is scheduled again. One whose turn still runs
   * is only marked for its holder; one whose holder died is drained by whoever takes its lock over.
   */
  async recoverStale(logger: Logger, olderThanMs: number): Promise<number> {
    const ids = await this.pendingSessions(Ctx.system(logger, 'recover'), new Date(Date.now() - olderThanMs));
    for (const sessionId of ids) await this.scheduler.schedule(sessionId, 'recover');
    if (ids.length) logger.debug({ sessions: ids.length }, 'looked again at sessions with messages waiting');
    return ids.length;
  }

  /** Sessions with user messages QUEUED or PROCESSING (last changed before `before`, when given). */
  private async pendingSessions(ctx: Ctx, before: Date | null): Promise<string[]> {
    const query = this.db
      .repo(ctx, Message)
      .createQueryBuilder('m')
      .select('DISTINCT m.sessionId', 'sessionId')
      .innerJoin(Session, 's', 's.id = m.sessionId')
      // Literal statuses, so SQLite can use the partial index of pending messages (IDX_messages_pending).
      .where(`m.status IN ('${MessageStatus.QUEUED}', '${MessageStatus.PROCESSING}') AND m.role = :role`, { role: MessageRole.USER })
      .andWhere('s.channel NOT IN (:...selfRun)', { selfRun: SELF_RUN_CHANNELS });
    if (before) query.andWhere('m.updatedAt < :before', { before });
    const rows = await query.getRawMany<{ sessionId: string }>();
    return rows.map((r) => r.sessionId);
  }

  /** Answers a message stored under a reservation (`submit`): a turn of its own, with nothing older waiting. */
  async runClaimed(ctx: Ctx, claimed: ClaimedTurn, runner: TurnExecutor, signal: AbortSignal): Promise<DrainResult> {
    const { session, message, turnId } = claimed;
    const controller = this.running.begin(session.id, turnId, message.id, signal);
    try {
      await runner.runTurn(ctx, session, [message], turnId, controller.signal);
    } finally {
      this.running.end(session.id, turnId);
    }
    return { turns: 1, left: 0 };
  }

  /** Drains a session by id; a session that no longer exists has nothing to drain. */
  drainSession(ctx: Ctx, sessionId: string, runner: TurnExecutor, signal: AbortSignal, maxTurns = Infinity): Promise<DrainResult> {
    return this.drain(ctx, sessionId, runner, signal, maxTurns);
  }

  /**
   * The messages a drain answers next, oldest first, with their session, in one statement: each knows
   * whether it has images, so a turn without any does not look for them. Null when nothing is pending
   * (or the session is gone, or answers its messages itself).
   */
  private async nextPending(ctx: Ctx, sessionId: string): Promise<{ session: Session; pending: Message[] } | null> {
    const { entities, raw } = await this.db
      .repo(ctx, Message)
      .createQueryBuilder('m')
      .innerJoinAndSelect('m.session', 's')
      .addSelect('CASE WHEN EXISTS (SELECT 1 FROM images i WHERE i."messageId" = m.id) THEN 1 ELSE 0 END', 'hasImages')
      .where('m.sessionId = :sessionId AND m.role = :role AND m.status IN (:...statuses)', { sessionId, role: MessageRole.USER, statuses: [MessageStatus.QUEUED, MessageStatus.PROCESSING] })
      .andWhere('s.channel NOT IN (:...selfRun)', { selfRun: SELF_RUN_CHANNELS })
      .orderBy('m.id', 'ASC')
      .getRawAndEntities<{ m_id: string; hasImages: number | string }>();
    if (!entities.length) return null;
    const withImages = new Set(raw.filter((r) => Number(r.hasImages) === 1).map((r) => r.m_id));
    const session = entities[0]!.session!;
    for (const m of entities) {
      m.hasImages = withImages.has(m.id);
      delete m.session;
    }
    return { session, pending: entities };
  }

  /** Whether the session has messages waiting for an answer. */
  async hasPending(ctx: Ctx, sessionId: string): Promise<boolean> {
    const n = await this.db.repo(ctx, Message).count({
      where: { sessionId, role: MessageRole.USER, status: In([MessageStatus.QUEUED, MessageStatus.PROCESSING]), session: { channel: Not(In(SELF_RUN_CHANNELS)) } },
    });
    return n > 0;
  }

  /**
   * Runs turns until the session has no pending message (or `maxTurns` ran): one per message in `followup`
   * and `interrupt` modes, one for everything waiting in `collect` mode. Returns the number of turns run
   * and how many of the messages seen pending at the last look were left for later.
   */
  async drain(ctx: Ctx, sessionId: string, runner: TurnExecutor, signal: AbortSignal, maxTurns = Infinity): Promise<DrainResult> {
    let turns = 0;
    let left = 0;
    while (!signal.aborted && turns < maxTurns) {
      const next = await this.nextPending(ctx, sessionId);
      left = next?.pending.length ?? 0;
      if (!next) break;
      const { session, pending } = next;
      const batch = this.queueMode() === 'collect' ? pending : [pending[0]!];
      left -= batch.length;
      // A message submitted with its turn id keeps it (first run only: a retried turn gets a new id).
      const first = batch[0]!;
      const turnId = first.status === MessageStatus.QUEUED && first.turnId ? first.turnId : newId();
      await this.db.update(ctx, Message, { id: batch.map((m) => m.id) }, { status: MessageStatus.PROCESSING, turnId });
      const controller = this.running.begin(session.id, turnId, batch[batch.length - 1]!.id, signal);
      try {
        await runner.runTurn(ctx, session, batch, turnId, controller.signal);
      } finally {
        this.running.end(session.id, turnId);
      }
      turns += 1;
    }
    return { turns, left };
  }
}
