import { Between, type FindOptionsWhere } from 'typeorm';
import { SYSTEM_CLOCK, type Clock } from '../../common/clock';
import type { Ctx } from '../../common/ctx';
import { ForbiddenError, UserInputError } from '../../common/errors';
import { TrustLevel } from '../../common/trust';
import type { Db } from '../../persistence/db';
import { access } from '../users';
import { UsageRecord } from './usage-record.entity';

export type UsageGroupBy = 'user' | 'session' | 'model' | 'day';

export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  estimated: boolean;
}

export interface UsageRow extends Omit<TokenCounts, 'estimated'> {
  key: string;
  calls: number;
  /** Cost in USD of the priced calls in the row. */
  costUsd: number;
  /** Calls of models without a price (their tokens are counted, their cost is not known). */
  unpricedCalls: number;
  /** True when any call in the row had estimated counts. */
  estimated: boolean;
}

export interface RecordUsageInput {
  userId: string | null;
  sessionId: string | null;
  messageId: string | null;
  provider: string;
  model: string;
  role: string;
  usage: TokenCounts;
  /** Seconds of audio (voice roles). @default 0 */
  audioSeconds?: number;
  /** What the call cost in USD; null (or absent) when the model has no price. */
  costUsd?: number | null;
}

/** Token usage per model call, and totals by user, session, model or day. */
export class UsageService {
  constructor(
    private readonly db: Db,
    /** When calls happen: budgets count days and months by it. @default SYSTEM_CLOCK */
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  async record(ctx: Ctx, input: RecordUsageInput): Promise<UsageRecord> {
    const { usage, audioSeconds, costUsd, ...rest } = input;
    const row = this.db.repo(ctx, UsageRecord).create({
      ...rest,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cacheReadTokens: usage.cacheReadTokens,
      cacheWriteTokens: usage.cacheWriteTokens,
      estimated: usage.estimated,
      audioSeconds: audioSeconds ?? 0,
      costUsd: costUsd ?? null,
      createdAt: this.clock.now(),
    });
    // Every column with a database default is written above, so there is nothing to read back.
    await this.db.insert(ctx, UsageRecord, row);
    return row;
  }

  /** Totals in [from, to): MEMBERs see their own usage, ADMIN and above everyone's. */
  async summary(
    ctx: Ctx,
    from: Date,
    to: Date,
    groupBy: UsageGroupBy,
    userId?: string | null,
  ): Promise<UsageRow[]> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'usage');
    if (!(from < to)) throw new UserInputError('"from" must be before "to".', 'from');
    const where: FindOptionsWhere<UsageRecord> = { createdAt: Between(from, to) };
    if (!access.seesEveryone(ctx)) {
      // As for sessions and memories: asking for someone else's is refused, not silently narrowed.
      if (userId && userId !== ctx.userId) throw new ForbiddenError('You may only read your own usage.');
      where.userId = ctx.userId!;
    } else if (userId) where.userId = userId;
    const rows = await this.db.repo(ctx, UsageRecord).find({ where, order: { id: 'ASC' } });
    const groups = new Map<string, UsageRow>();
    for (const r of rows) {
      const key = keyOf(r, groupBy);
      groups.set(key, addRecord(groups.get(key) ?? emptyRow(key), r));
    }
    return [...groups.values()].sort((a, b) => a.key.localeCompare(b.key));
  }

  /** Totals of one session (for /usage and /status). */
  async sessionTotals(ctx: Ctx, sessionId: string): Promise<UsageRow> {
    const rows = await this.db.repo(ctx, UsageRecord).findBy({ sessionId });
    return rows.reduce(addRecord, emptyRow(sessionId));
  }
}

function emptyRow(key: string): UsageRow {
  return {
    key,
    calls: 0,
    costUsd: 0,
    unpricedCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    estimated: false,
  };
}

function addRecord(row: UsageRow, r: UsageRecord): UsageRow {
  return {
    key: row.key,
    calls: row.calls + 1,
    costUsd: row.costUsd + (r.costUsd ?? 0),
    unpricedCalls: row.unpricedCalls + (r.costUsd === null ? 1 : 0),
    inputTokens: row.inputTokens + r.inputTokens,
    outputTokens: row.outputTokens + r.outputTokens,
    cacheReadTokens: row.cacheReadTokens + r.cacheReadTokens,
    cacheWriteTokens: row.cacheWriteTokens + r.cacheWriteTokens,
    estimated: row.estimated || r.estimated,
  };
}

function keyOf(r: UsageRecord, groupBy: UsageGroupBy): string {
  switch (groupBy) {
    case 'user':
      return r.userId ?? '(system)';
    case 'session':
      return r.sessionId ?? '(none)';
    case 'model':
      return `${r.provider}/${r.model}`;
    case 'day':
      return r.createdAt.toISOString().slice(0, 10);
  }
}
