import { Between, In, Not } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import type { Db } from '../../persistence/db';
import type { CallPriority, ModelCaller } from '../models';
import { Memory, MemoryScope, MemoryType, type CreateMemoryInput } from '../memory';
import { Image } from '../sessions';
import { Message } from '../sessions';
import { Session } from '../sessions';
import { ChatKind, MessageStatus } from '../sessions';
import type { UsageService } from '../usage';
import type { UserService } from '../users';
import { parseMemoryCandidates } from './memory-candidates';
import { normalizeSummary } from './structured-summary';
import { compactionPrompt, EXTRACT_MEMORIES_PROMPT, renderTranscript, summarizerMessages } from './summarizer.prompts';

/** Port: where memories go (the memory module's MemoryService, which keeps them indexed). */
export interface MemoryWriter {
  create(ctx: Ctx, input: CreateMemoryInput): Promise<Memory>;
}

/** Whose memories a session's content becomes: the user of a DM, the group of a group chat; null for neither. */
export interface MemoryOwner {
  scope: MemoryScope.USER | MemoryScope.GROUP;
  userId: string | null;
  groupId: string | null;
}

/**
 * The owner of memories written from a session. Group sessions write group memories keyed by the
 * session key (`agent:main:<channel>:group:<chatId>`), never a member's private ones (DESIGN §3);
 * DM sessions write the user's own; sessions of nobody (hooks) write none.
 */
export function memoryOwnerOf(session: Pick<Session, 'chatKind' | 'key' | 'userId'>): MemoryOwner | null {
  if (session.chatKind === ChatKind.GROUP) return { scope: MemoryScope.GROUP, userId: null, groupId: session.key };
  if (session.userId) return { scope: MemoryScope.USER, userId: session.userId, groupId: null };
  return null;
}

/** One finished exchange: the user messages of a turn and the reply. */
export interface ExchangeRef {
  sessionId: string;
  userMessageIds: string[];
  replyMessageId: string;
}

/** Part of the summarizer model's context window given to the transcript. */
const TRANSCRIPT_SHARE = 0.6;

/**
 * The summarizer role (DESIGN §5): condenses conversation into typed memories (fact, lesson,
 * reminder) of the right owner, and writes the structured summary of a compaction. Model answers are
 * parsed defensively; an unusable answer is logged and skipped, never thrown.
 */
export class SummarizerService {
  constructor(
    private readonly db: Db,
    private readonly models: ModelCaller,
    private readonly memories: MemoryWriter,
    private readonly users: UserService,
    private readonly usage: UsageService,
  ) {}

  /**
   * Condenses finished exchanges of one session into memories in one summarizer call (the
   * `summarizer.exchange` job); returns how many were written. Exchanges whose reply is gone are left out.
   */
  async summarizeExchanges(ctx: Ctx, sessionId: string, refs: Array<Omit<ExchangeRef, 'sessionId'>>): Promise<number> {
    const session = await this.db.repo(ctx, Session).findOneBy({ id: sessionId });
    const userIds = refs.flatMap((r) => r.userMessageIds);
    if (!session || !memoryOwnerOf(session) || !userIds.length) return 0;
    const first = [...userIds].sort()[0]!;
    const last = refs.map((r) => r.replyMessageId).sort().at(-1)!;
    const messages = await this.db.repo(ctx, Message).find({
      where: { sessionId: session.id, id: Between(first, last), status: Not(In([MessageStatus.QUEUED, MessageStatus.PROCESSING, MessageStatus.FAILED])) },
      order: { id: 'ASC' },
    });
    const ids = new Set(messages.map((m) => m.id));
    if (!refs.some((r) => ids.has(r.replyMessageId))) return 0;
    return this.extractMemories(ctx, session, messages, 'summarizer', ctx.signal);
  }

  /**
   * Asks the summarizer model for durable memories in `messages` and stores the new ones for the
   * session's owner (the memory flush of a compaction uses this too). Returns how many were written.
   */
  async extractMemories(ctx: Ctx, session: Session, messages: Message[], priority: CallPriority, signal?: AbortSignal): Promise<number> {
    const owner = memoryOwnerOf(session);
    if (!owner || !messages.length) return 0;
    const transcript = await this.transcript(ctx, messages);
    const where = session.chatKind === ChatKind.GROUP ? 'a group chat' : 'a direct chat';
    const answer = await this.call(ctx, session, priority, summarizerMessages(EXTRACT_MEMORIES_PROMPT, `Conversation in ${where}:`, transcript), signal);
    const parsed = parseMemoryCandidates(answer);
    if (!parsed.ok) {
      ctx.logger.warn({ sessionId: session.id, reason: parsed.error, answerChars: answer.length }, 'summarizer answer was not usable; skipped');
      return 0;
    }
    let written = 0;
    for (const candidate of parsed.memories) {
      if (await this.exists(ctx, owner, candidate.content)) continue;
      await this.memories.create(ctx, { ...owner, type: candidate.type, content: candidate.content, importance: candidate.importance, sourceSessionId: session.id });
      written += 1;
    }
    if (written || parsed.skipped) ctx.logger.info({ sessionId: session.id, written, skipped: parsed.skipped }, 'summarizer wrote memories');
    return written;
  }

  /** The structured five-section summary of `messages` (compaction); throws when the model call fails. */
  async summarize(ctx: Ctx, session: Session, messages: Message[], instructions: string | null, priority: CallPriority, signal?: AbortSignal): Promise<string> {
    const transcript = await this.transcript(ctx, messages);
    const answer = await this.call(ctx, session, priority, summarizerMessages(compactionPrompt(instructions), 'The conversation to compact:', transcript), signal);
    return normalizeSummary(answer, messages.map((m) => m.content).join('\n'));
  }

  /** Stores a compaction summary as a `summary` memory of the session's owner; null for sessions of nobody. */
  async storeSummary(ctx: Ctx, session: Session, summary: string): Promise<Memory | null> {
    const owner = memoryOwnerOf(session);
    if (!owner) return null;
    return this.memories.create(ctx, { ...owner, type: MemoryType.SUMMARY, content: summary, importance: 0.8, sourceSessionId: session.id });
  }

  private async exists(ctx: Ctx, owner: MemoryOwner, content: string): Promise<boolean> {
    return this.db.repo(ctx, Memory).existsBy({ scope: owner.scope, ...(owner.userId ? { userId: owner.userId } : { groupId: owner.groupId! }), content });
  }

  private async transcript(ctx: Ctx, messages: Message[]): Promise<string> {
    const userIds = [...new Set(messages.map((m) => m.userId).filter((id): id is string => !!id))];
    const users = userIds.length ? await this.users.usersByIds(ctx, userIds) : [];
    const names = new Map(users.filter((u) => !!u).map((u) => [u!.id, u!.displayName]));
    const imageRows = await this.db.repo(ctx, Image).find({ select: { id: true, messageId: true }, where: { messageId: In(messages.map((m) => m.id)) } });
    const images = new Map<string, number>();
    for (const img of imageRows) images.set(img.messageId!, (images.get(img.messageId!) ?? 0) + 1);
    const budgetTokens = Math.max(512, Math.floor(this.models.info('summarizer').contextWindow * TRANSCRIPT_SHARE) - 600);
    return renderTranscript(messages, { names, images, budgetTokens });
  }

  private async call(ctx: Ctx, session: Session, priority: CallPriority, messages: Parameters<ModelCaller['call']>[1]['messages'], signal?: AbortSignal): Promise<string> {
    // The summarizer works for the session's user: its calls are charged to their budget.
    const result = await this.models.call(ctx, { role: 'summarizer', priority, messages, chargeTo: session.userId }, signal);
    await this.usage.record(ctx, {
      userId: session.userId,
      sessionId: session.id,
      messageId: null,
      provider: result.provider,
      model: result.model,
      role: 'summarizer',
      usage: result.usage,
      costUsd: result.costUsd ?? null,
    });
    return result.text;
  }
}
