import { In, Not } from 'typeorm';
import { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import { newId } from '../../common/ids';
import type { Db } from '../../persistence/db';
import type { SessionEventPublisher } from '../events';
import { Image } from '../sessions';
import { Message } from '../sessions';
import { Session } from '../sessions';
import { MessageRole, MessageStatus } from '../sessions';
import type { RunningTurns } from './running-turns';
import type { TurnScheduler } from './turn-scheduler';

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

  /** Stores the message and schedules its session; a duplicate returns the first message. */
  async submit(ctx: Ctx, session: Session, input: SubmitInput): Promise<TurnTicket> {
    if (input.dedupeKey) {
      const existing = await this.db.repo(ctx, Message).findOneBy({ dedupeKey: input.dedupeKey });
      if (existing) return { messageId: existing.id, sessionId: existing.sessionId, status: existing.status, duplicate: true };
    }
    let message: Message;
    try {
      // A message without images is one row: one statement, no transaction around it.
      const store = async (tx: Ctx) => {
        const repo = this.db.repo(tx, Message);
        const saved = await repo.save(
          repo.create({
            sessionId: session.id,
            userId: ctx.userId,
            role: MessageRole.USER,
            content: input.text,
            status: MessageStatus.QUEUED,
            dedupeKey: input.dedupeKey ?? null,
            turnId: input.turnId ?? null,
            voiceSeconds: input.voiceSeconds ?? null,
          }),
          // Every column is set here (ids and times by the application): nothing to read back.
          { reload: false, transaction: false },
        );
        if (input.images?.length) {
          const images = this.db.repo(tx, Image);
          await images.save(input.images.map((img) => images.create({ messageId: saved.id, mimeType: img.mimeType, dataBase64: img.dataBase64 })));
        }
        return saved;
      };
      message = input.images?.length ? await this.db.withTransaction(ctx, store) : await store(ctx);
    } catch (err) {
      // Two deliveries of one platform message racing: the unique dedupe key lets exactly one in.
      const dup = input.dedupeKey ? await this.db.repo(ctx, Message).findOneBy({ dedupeKey: input.dedupeKey }) : null;
      if (dup) return { messageId: dup.id, sessionId: dup.sessionId, status: dup.status, duplicate: true };
      throw err;
    }
    await this.events.publish(session.id, { type: 'MessageAdded', messageId: message.id, role: message.role, content: message.content, ...(message.voiceSeconds != null ? { voiceSeconds: message.voiceSeconds } : {}) });
    if (this.queueMode() === 'interrupt') await this.scheduler.requestAbort(session.id, 'a newer message arrived', message.id);
    await this.scheduler.schedule(session.id, message.id);
    return { messageId: message.id, sessionId: session.id, status: message.status, duplicate: false };
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
    const rows = await this.db
      .repo(Ctx.system(logger, 'recover'), Message)
      .createQueryBuilder('m')
      .select('DISTINCT m.sessionId', 'sessionId')
      .innerJoin(Session, 's', 's.id = m.sessionId')
      .where('m.role = :role AND m.status IN (:...statuses)', { role: MessageRole.USER, statuses: [MessageStatus.QUEUED, MessageStatus.PROCESSING] })
      .andWhere('s.channel NOT IN (:...selfRun)', { selfRun: SELF_RUN_CHANNELS })
      .getRawMany<{ sessionId: string }>();
    for (const { sessionId } of rows) await this.scheduler.schedule(sessionId, 'recover');
    if (rows.length) logger.info({ sessions: rows.length }, 'rescheduled sessions with pending messages');
    return rows.length;
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
      await this.db.repo(ctx, Message).update({ id: In(batch.map((m) => m.id)) }, { status: MessageStatus.PROCESSING, turnId });
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
