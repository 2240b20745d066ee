import { In, type Repository } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import type { Db } from '../../persistence/db';
import { selectPlainWith } from '../../persistence/plain-select';
import type { ChatMessage, ContentPart, ToolCall } from '../models';
import { Image } from '../sessions';
import { Message } from '../sessions';
import { MessageRole, MessageStatus } from '../sessions';

export interface HistoryOptions {
  /** Most recent messages loaded. */
  limit: number;
  /** Attach images of the running turn's messages as image parts. */
  vision: boolean;
  /** Sender labels for group chats: userId → display name. */
  senderNames?: Map<string, string>;
}

function toolCallsOf(m: Message): ToolCall[] {
  return Array.isArray(m.toolCalls) ? (m.toolCalls as ToolCall[]) : [];
}

export interface LoadedHistory {
  /** The summary a compaction seeded the session with (pinned by the prompt builder). */
  summary: string | null;
  /** The conversation, oldest first, ending with the running turn's messages. */
  messages: ChatMessage[];
}

/**
 * Turns stored messages into model messages; failed replies and queued later messages are left out.
 * Tool calls and results keep their roles: the provider adapter writes them as text for models without
 * native tools.
 */
export function toChatMessages(
  rows: Message[],
  images: Map<string, Image[]>,
  opts: HistoryOptions,
  currentIds: Set<string>,
): LoadedHistory {
  const out: ChatMessage[] = [];
  const toolNames = new Map<string, string>();
  let summary: string | null = null;
  for (const m of rows) {
    switch (m.role) {
      case MessageRole.USER: {
        const label = opts.senderNames && m.userId ? opts.senderNames.get(m.userId) : undefined;
        // A transcript is marked as one, so the model knows the words were spoken (and may be misheard).
        const body =
          m.voiceSeconds != null ? `[voice note, ${m.voiceSeconds} s, transcribed] ${m.content}` : m.content;
        const text = label ? `[${label}] ${body}` : body;
        const imgs = currentIds.has(m.id) ? (images.get(m.id) ?? []) : [];
        if (imgs.length && opts.vision) {
          const parts: ContentPart[] = [
            { type: 'text', text },
            ...imgs.map((i) => ({ type: 'image' as const, mimeType: i.mimeType, dataBase64: i.dataBase64 })),
          ];
          out.push({ role: 'user', content: parts });
        } else {
          out.push({
            role: 'user',
            content: imgs.length
              ? `${text}\n[${imgs.length} image(s) attached; this model cannot see images]`
              : text,
          });
        }
        break;
      }
      case MessageRole.ASSISTANT: {
        const calls = toolCallsOf(m);
        for (const c of calls) toolNames.set(c.id, c.name);
        out.push(
          calls.length
            ? { role: 'assistant', content: m.content, toolCalls: calls }
            : { role: 'assistant', content: m.content },
        );
        break;
      }
      case MessageRole.TOOL: {
        const name = m.toolCallId ? toolNames.get(m.toolCallId) : undefined;
        out.push({
          role: 'tool',
          content: m.content,
          toolCallId: m.toolCallId ?? undefined,
          ...(name ? { name } : {}),
        });
        break;
      }
      case MessageRole.SYSTEM:
        // The summary a compaction seeded the session with.
        summary = m.content;
        break;
    }
  }
  return { summary, messages: out };
}

/**
 * Where the history window starts among `count` messages: it holds at most `limit` of the latest, and its
 * start moves in steps of half the limit rather than by one message each turn, so consecutive prompts of a
 * session share their prefix (prompt caching) except when the window steps forward.
 */
export function windowStart(count: number, limit: number): number {
  if (count <= limit) return 0;
  const step = Math.max(1, Math.floor(limit / 2));
  return Math.ceil((count - limit) / step) * step;
}

/**
 * Loads the recent history of a session up to the last message of the running turn: one statement for
 * the window (with the count it is placed by and the id of the session's seed summary), a second only
 * when the seed lies before the window, and the images of the turn's messages only when they have any.
 */
export async function loadHistory(
  db: Db,
  ctx: Ctx,
  sessionId: string,
  batch: Message[],
  opts: HistoryOptions,
): Promise<LoadedHistory> {
  const lastId = batch[batch.length - 1]!.id;
  const repo = db.repo(ctx, Message);
  const { newest, total, seedId } = await newestOf(repo, sessionId, lastId, opts.limit);
  // The window holds the newest `total - start` of them (windowStart never leaves more than `limit`).
  const rows = newest.slice(0, total - windowStart(total, opts.limit)).reverse();
  // Messages of the running turn are PROCESSING; make sure they are all in, even past the limit.
  const ids = new Set(rows.map((r) => r.id));
  for (const m of batch) if (!ids.has(m.id)) rows.push(m);
  // The summary a compaction seeded the session with stays in, however long the session grew since.
  if (!newest.length) {
    const seed = await repo.findOne({ where: { sessionId, role: MessageRole.SYSTEM }, order: { id: 'ASC' } });
    if (seed) rows.push(seed);
  } else if (seedId && !rows.some((r) => r.id === seedId)) {
    const seed = await repo.findOneBy({ id: seedId });
    if (seed) rows.push(seed);
  }
  rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const currentIds = new Set(batch.map((m) => m.id));
  // A message read for its turn knows whether it has images; one read elsewhere may have.
  const mayHaveImages = batch.filter((m) => m.hasImages !== false).map((m) => m.id);
  const imageRows = mayHaveImages.length
    ? await db.repo(ctx, Image).findBy({ messageId: In(mayHaveImages) })
    : [];
  const images = new Map<string, Image[]>();
  for (const img of imageRows) images.set(img.messageId!, [...(images.get(img.messageId!) ?? []), img]);
  return toChatMessages(rows, images, opts, currentIds);
}

const HIDDEN = [MessageStatus.QUEUED, MessageStatus.FAILED];

/**
 * The newest `limit` shown messages up to `lastId`, newest first, with the number of shown messages up to
 * it and the id of the session's first system message (a compaction's seed), in one statement.
 */
async function newestOf(
  repo: Repository<Message>,
  sessionId: string,
  lastId: string,
  limit: number,
): Promise<{ newest: Message[]; total: number; seedId: string | null }> {
  const plain = await selectPlainWith(repo, 'm', 2, (q) => {
    const [session, id, status, role] = [
      q.column('sessionId'),
      q.column('id'),
      q.column('status'),
      q.column('role'),
    ];
    const shown = (a: string) =>
      `${a}.${session} = ${q.param(sessionId)} AND ${a}.${id} <= ${q.param(lastId)} AND ${a}.${status} NOT IN (${HIDDEN.map(q.param).join(', ')})`;
    return (
      `SELECT ${q.columns}, (SELECT COUNT(*) FROM ${q.table} c WHERE ${shown('c')}) AS "x0", ` +
      `(SELECT MIN(f.${id}) FROM ${q.table} f WHERE f.${session} = ${q.param(sessionId)} AND f.${role} = ${q.param(MessageRole.SYSTEM)}) AS "x1" ` +
      `FROM ${q.table} m WHERE ${shown('m')} ORDER BY m.${id} DESC LIMIT ${Math.max(0, Math.floor(limit))}`
    );
  });
  if (plain)
    return {
      newest: plain.map((r) => r.entity),
      total: Number(plain[0]?.extras[0] ?? 0),
      seedId: (plain[0]?.extras[1] as string | null) ?? null,
    };
  const params = { sessionId, lastId, hidden: HIDDEN, system: MessageRole.SYSTEM };
  const { entities, raw } = await repo
    .createQueryBuilder('m')
    .addSelect(
      (q) =>
        q
          .select('COUNT(*)')
          .from(Message, 'c')
          .where('c.sessionId = :sessionId AND c.id <= :lastId AND c.status NOT IN (:...hidden)'),
      'total',
    )
    .addSelect(
      (q) => q.select('MIN(f.id)').from(Message, 'f').where('f.sessionId = :sessionId AND f.role = :system'),
      'seedId',
    )
    .where('m.sessionId = :sessionId AND m.id <= :lastId AND m.status NOT IN (:...hidden)')
    .setParameters(params)
    .orderBy('m.id', 'DESC')
    .limit(limit)
    .getRawAndEntities<{ total: number | string; seedId: string | null }>();
  return { newest: entities, total: Number(raw[0]?.total ?? 0), seedId: raw[0]?.seedId ?? null };
}
