import { randomBytes } from 'node:crypto';
import { In } from 'typeorm';
import { SYSTEM_CLOCK, type Clock } from '../../common/clock';
import { Ctx } from '../../common/ctx';
import { ConflictError, UserInputError } from '../../common/errors';
import { newId } from '../../common/ids';
import type { Db } from '../../persistence/db';
import type { CallPriority } from '../models';
import type { NoticeSender } from '../events';
import { withSessionLock, type SessionLocks, type SessionRotation } from '../conversation';
import { Message } from '../sessions';
import { Session } from '../sessions';
import { successorOf } from '../sessions';
import { MessageRole, MessageStatus, SessionStatus } from '../sessions';
import type { SummarizerService } from './summarizer.service';
import { planSeed, type SeedPlan } from './compaction-seed';


/** Why a session is compacted; also the `reason` of its SessionRotated event. */
export type CompactionReason = 'compact' | 'context-threshold' | 'context-length';

export interface CompactOptions {
  reason: CompactionReason;
  /** Extra instructions for the summary (`/compact <instructions>`). */
  instructions?: string | null;
  /** Messages of the running turn to answer again in the new session (the valve). */
  carry?: Message[];
  /** Priority of the summarizer calls: `interactive` when someone waits for the compaction. */
  priority: CallPriority;
  /** One line told to the session's subscribers and, on platform chats, to the chat. */
  notice?: string;
}

export interface CompactionResult {
  previous: Session;
  session: Session;
  summary: string;
  /** The `summary` memory, when the session has an owner. */
  summaryMemoryId: string | null;
  /** Memories written by the flush. */
  flushed: number;
  /** Messages of the last turns copied into the new session. */
  kept: number;
  /** Waiting messages moved to the new session (answered there). */
  moved: number;
}

/** Longest `/compact` instructions accepted. */
export const MAX_COMPACT_INSTRUCTIONS = 2_000;
/** How long a requested compaction waits for a lock held by a turn that has answered and is finishing up. */
const FINISHING_TURN_WAIT_MS = 3000;

/** Marks the SYSTEM message a compaction seeds a session with (`compaction:<new session id>`). */
export const SUMMARY_KEY_PREFIX = 'compaction:';

/**
 * Ids that sort before `anchor` (a UUIDv7 message id) and after everything older than it: seeded
 * messages must precede the messages moved into a new session, which keep their ids and images.
 */
export function idsBefore(anchor: string, count: number): string[] {
  const ms = parseInt(anchor.replace(/-/g, '').slice(0, 12), 16) - 1;
  const hex = ms.toString(16).padStart(12, '0');
  return Array.from({ length: count }, (_, seq) => {
    const rand = randomBytes(8);
    const variant = ((rand[0]! & 0x3f) | 0x80).toString(16).padStart(2, '0');
    const tail = rand.subarray(1).toString('hex').slice(0, 14);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${(0x7000 | (seq & 0xfff)).toString(16)}-${variant}${tail.slice(0, 2)}-${tail.slice(2, 14)}`;
  });
}

/**
 * Compaction (DESIGN §5): a memory flush of durable facts, then a structured five-section summary
 * stored as a `summary` memory; the old session is archived (never deleted) and a new one with the same
 * key starts, seeded with the summary (a SYSTEM message) and copies of the most recent turns. Messages
 * still waiting (and, for the valve, the running turn's) move to the new session with their images and
 * are answered there. `SessionRotated` is published on the old session.
 */
export class CompactionService {
  constructor(
    private readonly db: Db,
    private readonly summarizer: SummarizerService,
    private readonly rotation: SessionRotation,
    private readonly notifier: NoticeSender,
    private readonly locks: SessionLocks,
    private readonly options: {
      keepTurns: () => number;
      /** Tokens a compacted session may start with (summary + kept turns + carried messages). @default unlimited */
      seedBudgetTokens?: () => number;
      /** The main model's context window, to tell how much of it carried messages take. */
      contextWindow?: () => number;
      /** Hands a session to the turn queue: for a message stored while a compaction held the session. */
      drainLater?: (sessionId: string) => Promise<void>;
    },
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /**
   * Compacts an ACTIVE session. The caller makes sure no turn of the session runs meanwhile (it holds
   * the session's turn lock, or is that turn). Throws ConflictError when there is nothing to compact or
   * the session was rotated meanwhile; model errors propagate.
   */
  async compact(callerCtx: Ctx, session: Session, opts: CompactOptions): Promise<CompactionResult> {
    // Memories are written by the server for the session's owner, whoever asked (also in groups).
    const ctx = new Ctx({ actor: { kind: 'system', reason: 'compaction' }, logger: callerCtx.logger, requestId: callerCtx.requestId, channel: callerCtx.channel });
    if (session.status !== SessionStatus.ACTIVE) throw new ConflictError('This session is archived; only an active session can be compacted.');
    const carryIds = new Set((opts.carry ?? []).map((m) => m.id));
    const rows = await this.db.repo(ctx, Message).find({ where: { sessionId: session.id }, order: { id: 'ASC' } });
    const transcript = rows.filter((m) => m.status === MessageStatus.DONE && !carryIds.has(m.id));
    if (!transcript.some((m) => m.role !== MessageRole.SYSTEM)) throw new ConflictError('There is nothing to compact in this session yet.');
    const flushed = await this.summarizer.extractMemories(ctx, session, transcript, opts.priority, callerCtx.signal);
    const summary = await this.summarizer.summarize(ctx, session, transcript, opts.instructions ?? null, opts.priority, callerCtx.signal);
    const memory = await this.summarizer.storeSummary(ctx, session, summary);
    const moving = rows.filter((m) => carryIds.has(m.id) || (m.role === MessageRole.USER && m.status === MessageStatus.QUEUED));
    const seed = planSeed(summary, recentTurns(transcript, this.options.keepTurns()), moving, this.options.seedBudgetTokens?.() ?? Number.POSITIVE_INFINITY);
    const kept = seed.kept;

    const next = await this.db.withTransaction(ctx, async (tx) => {
      const sessions = this.db.repo(tx, Session);
      const now = this.clock.now();
      const archived = await sessions.update({ id: session.id, status: SessionStatus.ACTIVE }, { status: SessionStatus.ARCHIVED, endedAt: now, updatedAt: now });
      if (!archived.affected) throw new ConflictError('This session was rotated meanwhile.');
      const created = await sessions.save(
        sessions.create({ ...successorOf(session, now), messageCount: 1 + kept.length + moving.length }),
      );
      const messages = this.db.repo(tx, Message);
      const ids = moving.length ? idsBefore(moving[0]!.id, 1 + kept.length) : Array.from({ length: 1 + kept.length }, () => newId());
      const copyOf = new Map<string, string>();
      kept.forEach((m, i) => copyOf.set(m.id, ids[i + 1]!));
      await messages.save([
        messages.create({
          id: ids[0],
          sessionId: created.id,
          userId: null,
          role: MessageRole.SYSTEM,
          content: `Summary of the conversation so far (compacted from session ${session.id}):\n\n${seed.summary}`,
          status: MessageStatus.DONE,
          dedupeKey: `${SUMMARY_KEY_PREFIX}${created.id}`,
          replyToId: null,
          turnId: null,
          toolCalls: null,
          toolCallId: null,
        }),
        ...kept.map((m) =>
          messages.create({
            id: copyOf.get(m.id),
            sessionId: created.id,
            userId: m.userId,
            role: m.role,
            content: m.content,
            status: MessageStatus.DONE,
            dedupeKey: null,
            replyToId: m.replyToId ? (copyOf.get(m.replyToId) ?? null) : null,
            turnId: m.turnId,
            toolCalls: m.toolCalls ?? null,
            toolCallId: m.toolCallId,
          }),
        ),
      ]);
      if (moving.length) {
        await messages.update({ id: In(moving.map((m) => m.id)) }, { sessionId: created.id, status: MessageStatus.QUEUED, turnId: null });
      }
      return created;
    });

    ctx.logger.info({ sessionId: session.id, newSessionId: next.id, reason: opts.reason, flushed, kept: kept.length, moved: moving.length, seedTokens: seed.tokens }, 'session compacted');
    if (opts.notice) await this.tell(ctx, session, next, opts.notice + this.tooLargeNote(seed));
    await this.rotation.announce(session, next, opts.reason, moving[0]?.id ?? null);
    return { previous: session, session: next, summary, summaryMemoryId: memory?.id ?? null, flushed, kept: kept.length, moved: moving.length };
  }

  /**
   * Compacts on request (`/compact`, `compactSession`): holds the session's turn lock meanwhile, so no
   * turn runs during it. Throws ConflictError when a turn is running (or the session is archived).
   */
  async compactNow(ctx: Ctx, session: Session, instructions: string | null, notice?: string): Promise<CompactionResult> {
    if (instructions && instructions.length > MAX_COMPACT_INSTRUCTIONS) {
      throw new UserInputError(`instructions must be at most ${MAX_COMPACT_INSTRUCTIONS} characters.`, 'instructions');
    }
    // No message waiting or being answered: whoever holds the lock is only finishing a turn, so wait for it.
    const answering = await this.db.repo(ctx, Message).existsBy({ sessionId: session.id, role: MessageRole.USER, status: In([MessageStatus.QUEUED, MessageStatus.PROCESSING]) });
    const out = await withSessionLock(
      this.locks,
      session.id,
      async () => {
        const current = await this.db.repo(ctx, Session).findOneByOrFail({ id: session.id });
        return this.compact(ctx, current, { reason: 'compact', instructions, priority: 'interactive', notice });
      },
      answering ? 0 : FINISHING_TURN_WAIT_MS,
      this.options.drainLater,
    );
    if (!out) throw new ConflictError('A turn is running in this session; compact again when it has finished (or /stop it first).');
    return out.value;
  }

  /** The summary a compaction seeded `sessionId` with, or null (`/memory`). */
  async currentSummary(ctx: Ctx, sessionId: string): Promise<string | null> {
    const seed = await this.db.repo(ctx, Message).findOneBy({ dedupeKey: `${SUMMARY_KEY_PREFIX}${sessionId}` });
    return seed?.content ?? null;
  }

  /** Said with the notice when the carried messages alone are too large for the new session to start small. */
  private tooLargeNote(seed: SeedPlan): string {
    if (!seed.carriedTooLarge) return '';
    const window = this.options.contextWindow?.();
    const share = window ? ` (about ${Math.round((100 * seed.carriedTokens) / window)}% of the context window)` : '';
    return ` Your message alone is very long${share}, so the new session starts nearly full; a shorter message or /new will help.`;
  }

  private async tell(ctx: Ctx, previous: Session, next: Session, text: string): Promise<void> {
    await this.notifier.notify(ctx, { channel: previous.channel, chatId: previous.chatId, key: `compaction:${next.id}`, sessionId: previous.id }, text);
  }
}

/**
 * The last `turns` turns of a transcript: from the `turns`-th last user message on, without the seeded
 * summary (the new one replaces it). Starts at a user message, so no tool result is orphaned.
 */
export function recentTurns(transcript: Message[], turns: number): Message[] {
  if (turns <= 0) return [];
  const plain = transcript.filter((m) => m.role !== MessageRole.SYSTEM);
  let seen = 0;
  for (let i = plain.length - 1; i >= 0; i--) {
    if (plain[i]!.role !== MessageRole.USER) continue;
    seen += 1;
    if (seen === turns) return plain.slice(i);
  }
  const firstUser = plain.findIndex((m) => m.role === MessageRole.USER);
  return firstUser < 0 ? [] : plain.slice(firstUser);
}
