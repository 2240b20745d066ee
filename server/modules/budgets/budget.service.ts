import { randomUUID } from 'node:crypto';
import { ChangeCache } from '../../common/change-cache';
import type { Clock } from '../../common/clock';
import type { Ctx } from '../../common/ctx';
import { BudgetExceededError, UserInputError } from '../../common/errors';
import { NO_METRICS, type Metrics } from '../../common/metrics';
import { TrustLevel } from '../../common/trust';
import type { BudgetsConfig } from '../../config';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../audit';
import type { BudgetAdmission, BudgetCharge, BudgetGuard, BudgetHold, BudgetRequest, ChatResult } from '../models';
import { UsageRecord } from '../usage';
import { access, User } from '../users';
import { formatUsd, spentOf } from './budget-format';
import type { BudgetLedger } from './budget-ledger';
import { describeReset, periodsAt, type BudgetPeriods } from './budget-periods';
import type { BudgetStatus } from './budget.types';
import type { PriceTable } from './pricing';
import { UserBudget } from './user-budget.entity';

/** Port: tells a user something about their budget in their chat (the session's, else their principal chat). */
export interface BudgetNotices {
  tell(ctx: Ctx, userId: string, sessionId: string | null, key: string, text: string): Promise<void>;
}

export interface BudgetServiceOptions {
  /** The `budgets` config section, read at each call (so tests and reloads see changes). */
  config: () => BudgetsConfig;
  /** IANA zone in which days and months begin. */
  timeZone: string;
  /** How long a held estimate lives when its call never settles (a process died). @default 15 min */
  holdMs?: number;
}

const NANO = 1e9;
const toNanos = (usd: number) => Math.round(usd * NANO);
const toUsd = (nanos: number) => nanos / NANO;
const DAY_MS = 86_400_000;

/** What the database says about a user's limits. */
interface BudgetRow {
  trust: TrustLevel;
  budgetId: string | null;
  dailyUsd: number | string | null;
  monthlyUsd: number | string | null;
}

/** A user's limits in USD and where they come from. */
interface Limits {
  trust: TrustLevel;
  dailyUsd: number | null;
  monthlyUsd: number | null;
  custom: boolean;
}

/**
 * Budgets (DESIGN §10): what each user may spend per day and month, enforced before every model call.
 * Limits come from `setUserBudget` or the default of the user's trust level (OWNER: unlimited unless
 * set). A call is admitted while the period's spend plus what the user's running calls hold is below
 * the limit; it holds its estimate (prompt + output allowance at the model's price) in the Redis ledger
 * until it settles with its real cost, so concurrent calls on any process overshoot by at most one
 * call's estimate. Spend counters are seeded from the usage table, which stays the record.
 */
export class BudgetService implements BudgetGuard {
  private readonly holdMs: number;
  /** Budget rows by user (dropped on any change of users or budgets, in any process). */
  private readonly budgetRows: ChangeCache<BudgetRow | null>;

  constructor(
    private readonly deps: { db: Db; ledger: BudgetLedger; prices: PriceTable; audit: AuditService; notices: BudgetNotices; clock: Clock; metrics?: Metrics },
    private readonly options: BudgetServiceOptions,
  ) {
    this.holdMs = options.holdMs ?? 15 * 60_000;
    this.budgetRows = new ChangeCache(deps.db.changes, ['users']);
  }

  get onExceed(): 'block' | 'downgrade' {
    return this.options.config().on_exceed;
  }

  private get metrics(): Metrics {
    return this.deps.metrics ?? NO_METRICS;
  }

  // === The guard (ModelCallService asks it around every call)

  async admit(ctx: Ctx, req: BudgetRequest): Promise<BudgetAdmission> {
    if (!req.userId) return { kind: 'admitted', hold: null, maxTokens: null };
    const limits = await this.limitsFor(ctx, req.userId);
    const base: BudgetHold = { id: null, userId: req.userId, trust: limits.trust, dailyUsd: limits.dailyUsd, monthlyUsd: limits.monthlyUsd };
    if (limits.dailyUsd === null && limits.monthlyUsd === null) return { kind: 'admitted', hold: base, maxTokens: null };
    const cap = this.options.config().max_output_tokens;
    const maxTokens = Math.min(req.maxTokens ?? cap, cap);
    const amount = toNanos(this.deps.prices.estimate(req.provider, req.model, req.promptTokens(), maxTokens));
    const now = this.deps.clock.now();
    const periods = periodsAt(now, this.options.timeZone);
    const ledgerLimits = { day: limits.dailyUsd === null ? null : toNanos(limits.dailyUsd), month: limits.monthlyUsd === null ? null : toNanos(limits.monthlyUsd) };
    const holdId = randomUUID();
    for (let attempt = 0; attempt < 3; attempt++) {
      const result = await this.deps.ledger.reserve(req.userId, periods, ledgerLimits, holdId, amount, this.holdMs);
      if (result.kind === 'held') return { kind: 'admitted', hold: { ...base, id: holdId }, maxTokens };
      if (result.kind === 'exceeded') {
        this.metrics.inc('muninn_budget_refusals_total', { trust: limits.trust });
        const spent = toUsd(result.period === 'day' ? result.day : result.month);
        return { kind: 'exceeded', error: this.exceededError(result.period, spent, limits, periods, now) };
      }
      await this.seed(ctx, req.userId, periods);
    }
    throw new Error(`the budget ledger of user ${req.userId} could not be seeded`);
  }

  async settle(ctx: Ctx, charge: BudgetCharge, result: ChatResult): Promise<number | null> {
    const cost = this.deps.prices.costOf(result.provider, result.model, result.usage);
    // Nothing to charge and no hold to drop (a model without a price, an unlimited user's call, most
    // embeddings): the user's limits and the ledger are not needed.
    if (!cost && !charge.hold?.id) return cost;
    try {
      let hold = charge.hold;
      if (!hold && charge.userId) {
        const limits = await this.limitsFor(ctx, charge.userId);
        hold = { id: null, userId: charge.userId, trust: limits.trust, dailyUsd: limits.dailyUsd, monthlyUsd: limits.monthlyUsd };
      }
      if (cost) this.metrics.inc('muninn_model_cost_usd_total', { provider: result.provider, model: result.model, trust: hold?.trust ?? 'none' }, cost);
      if (!hold) return cost;
      const now = this.deps.clock.now();
      const periods = periodsAt(now, this.options.timeZone);
      const totals = await this.deps.ledger.settle(hold.userId, periods, hold.id, toNanos(cost ?? 0));
      await this.warnIfNear(ctx, hold, charge.sessionId, periods, now, totals);
    } catch (err) {
      // The call is done and its usage is recorded either way; the ledger is seeded again from it later.
      ctx.logger.warn({ err: (err as Error).message, userId: charge.userId }, 'could not charge a model call to its budget');
    }
    return cost;
  }

  async release(ctx: Ctx, hold: BudgetHold): Promise<void> {
    if (!hold.id) return;
    await this.deps.ledger.release(hold.userId, hold.id).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'could not release a budget hold; it expires by itself'));
  }

  async downgraded(ctx: Ctx, userId: string, sessionId: string | null, reason: BudgetExceededError): Promise<void> {
    const periods = periodsAt(this.deps.clock.now(), this.options.timeZone);
    const key = reason.period === 'day' ? `downgrade:day:${periods.day}` : `downgrade:month:${periods.month}`;
    if (!(await this.deps.ledger.once(userId, key, reason.period === 'day' ? 2 * DAY_MS : 32 * DAY_MS))) return;
    const when = describeReset(reason.resetsAt, this.deps.clock.now(), this.options.timeZone);
    const which = reason.period === 'day' ? 'daily' : 'monthly';
    await this.deps.notices.tell(ctx, userId, sessionId, `budget:${userId}:${key}`, `💸 Your ${which} budget is used up, so until it resets at ${when} your answers come from a smaller, cheaper model.`);
  }

  /**
   * Throws BudgetExceededError when the user's day or month is spent and calls over budget are refused
   * (`on_exceed: block`); a quick check before a message is even stored (GraphQL `sendMessage`).
   */
  async assertWithinBudget(ctx: Ctx, userId: string): Promise<void> {
    if (this.onExceed !== 'block') return;
    const limits = await this.limitsFor(ctx, userId);
    if (limits.dailyUsd === null && limits.monthlyUsd === null) return;
    const now = this.deps.clock.now();
    const periods = periodsAt(now, this.options.timeZone);
    const spent = await this.spentNanos(ctx, userId, periods);
    if (limits.dailyUsd !== null && spent.day >= toNanos(limits.dailyUsd)) throw this.exceededError('day', toUsd(spent.day), limits, periods, now);
    if (limits.monthlyUsd !== null && spent.month >= toNanos(limits.monthlyUsd)) throw this.exceededError('month', toUsd(spent.month), limits, periods, now);
  }

  // === Status and settings

  /** Limits and spending of a user: your own, or anyone's for ADMIN and above. */
  async status(ctx: Ctx, userId: string): Promise<BudgetStatus> {
    access.requireOwnOrAdmin(ctx, userId, 'budget');
    const limits = await this.limitsFor(ctx, userId);
    const now = this.deps.clock.now();
    const periods = periodsAt(now, this.options.timeZone);
    const spent = await this.spentNanos(ctx, userId, periods);
    const today = toUsd(spent.day);
    const month = toUsd(spent.month);
    const monthLimits = limits.monthlyUsd !== null && (limits.dailyUsd === null || month >= limits.monthlyUsd);
    return {
      dailyUsd: limits.dailyUsd,
      monthlyUsd: limits.monthlyUsd,
      spentTodayUsd: today,
      spentMonthUsd: month,
      resetsAt: monthLimits ? periods.monthEnd : periods.dayEnd,
      custom: limits.custom,
    };
  }

  /**
   * Sets a user's own limits (null: unlimited), replacing their trust level's default. ADMIN may set
   * them for users up to TRUSTED, OWNER for anyone.
   */
  async setUserBudget(ctx: Ctx, userId: string, dailyUsd: number | null, monthlyUsd: number | null): Promise<BudgetStatus> {
    for (const [field, v] of [['dailyUsd', dailyUsd], ['monthlyUsd', monthlyUsd]] as const) {
      if (v !== null && (!Number.isFinite(v) || v < 0 || v > 1_000_000)) throw new UserInputError(`${field} must be between 0 and 1000000 USD, or null for unlimited.`, field);
    }
    await this.requireMayManage(ctx, userId);
    await this.deps.db.withTransaction(ctx, async (tx) => {
      const repo = this.deps.db.repo(tx, UserBudget);
      const row = (await repo.findOneBy({ userId })) ?? repo.create({ userId });
      row.dailyUsd = dailyUsd;
      row.monthlyUsd = monthlyUsd;
      await repo.save(row);
      this.deps.db.changed(tx, 'users');
      await this.deps.audit.record(tx, 'budget.set', { type: 'User', id: userId }, { dailyUsd, monthlyUsd });
    });
    return this.status(ctx, userId);
  }

  /** Drops a user's own limits: the default of their trust level applies again. */
  async clearUserBudget(ctx: Ctx, userId: string): Promise<BudgetStatus> {
    await this.requireMayManage(ctx, userId);
    await this.deps.db.withTransaction(ctx, async (tx) => {
      await this.deps.db.repo(tx, UserBudget).delete({ userId });
      this.deps.db.changed(tx, 'users');
      await this.deps.audit.record(tx, 'budget.clear', { type: 'User', id: userId });
    });
    return this.status(ctx, userId);
  }

  /** Two lines for `/usage`: today's and this month's spending against the limits, and when they reset. */
  async describe(ctx: Ctx, userId: string): Promise<string> {
    const s = await this.status(ctx, userId);
    const now = this.deps.clock.now();
    const periods = periodsAt(now, this.options.timeZone);
    return [
      `Spent today: ${spentOf(s.spentTodayUsd, s.dailyUsd)} · this month: ${spentOf(s.spentMonthUsd, s.monthlyUsd)}`,
      s.dailyUsd === null && s.monthlyUsd === null ? 'Your budget is unlimited.' : `Resets: daily at ${describeReset(periods.dayEnd, now, this.options.timeZone)}; monthly on ${periods.monthEnd.toISOString().slice(0, 10)}.`,
    ].join('\n');
  }

  // === Internals

  private async spentNanos(ctx: Ctx, userId: string, periods: BudgetPeriods): Promise<{ day: number; month: number }> {
    let spent = await this.deps.ledger.spent(userId, periods);
    if (spent.day === null || spent.month === null) {
      await this.seed(ctx, userId, periods);
      spent = await this.deps.ledger.spent(userId, periods);
    }
    return { day: spent.day ?? 0, month: spent.month ?? 0 };
  }

  private async requireMayManage(ctx: Ctx, userId: string): Promise<void> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'setting budgets');
    const user = await this.deps.db.repo(ctx, User).findOne({ select: { id: true, trust: true }, where: { id: userId } });
    if (!user) throw new UserInputError(`User ${userId} was not found.`, 'userId');
    access.requireMayGrant(ctx, user.trust, user.trust);
  }

  private async limitsFor(ctx: Ctx, userId: string): Promise<Limits> {
    // This process's copy while no user or budget changed (in any process): a change applies at the next call.
    const row = await this.budgetRows.get(userId, () => this.budgetRow(ctx, userId));
    const trust = row?.trust ?? TrustLevel.GUEST;
    const usd = (v: number | string | null) => (v === null ? null : Number(v));
    if (row?.budgetId) return { trust, dailyUsd: usd(row.dailyUsd), monthlyUsd: usd(row.monthlyUsd), custom: true };
    const byTrust = this.options.config().defaults[trust];
    return { trust, dailyUsd: byTrust?.daily_usd ?? null, monthlyUsd: byTrust?.monthly_usd ?? null, custom: false };
  }

  /** One statement: the user's trust and their own budget row, when they have one. */
  private async budgetRow(ctx: Ctx, userId: string): Promise<BudgetRow | null> {
    const row = await this.deps.db
      .repo(ctx, User)
      .createQueryBuilder('u')
      .leftJoin(UserBudget, 'b', 'b.userId = u.id')
      .select('u.trust', 'trust')
      .addSelect('b.id', 'budgetId')
      .addSelect('b.dailyUsd', 'dailyUsd')
      .addSelect('b.monthlyUsd', 'monthlyUsd')
      .where('u.id = :userId', { userId })
      .getRawOne<BudgetRow>();
    return row ?? null;
  }

  /** Seeds the ledger's day and month counters of a user from the usage table. */
  private async seed(ctx: Ctx, userId: string, periods: BudgetPeriods): Promise<void> {
    const sum = async (from: Date, to: Date) => {
      const row = await this.deps.db
        .repo(ctx, UsageRecord)
        .createQueryBuilder('u')
        .select('COALESCE(SUM(u.costUsd), 0)', 'total')
        .where('u.userId = :userId AND u.createdAt >= :from AND u.createdAt < :to', { userId, from, to })
        .getRawOne<{ total: string | number }>();
      return toNanos(Number(row?.total ?? 0));
    };
    const [day, month] = await Promise.all([sum(periods.dayStart, periods.dayEnd), sum(periods.monthStart, periods.monthEnd)]);
    await Promise.all([this.deps.ledger.seed(userId, 'day', periods.day, day), this.deps.ledger.seed(userId, 'month', periods.month, month)]);
  }

  private exceededError(period: 'day' | 'month', spent: number, limits: Limits, periods: BudgetPeriods, now: Date): BudgetExceededError {
    const resetsAt = period === 'day' ? periods.dayEnd : periods.monthEnd;
    const limit = period === 'day' ? limits.dailyUsd! : limits.monthlyUsd!;
    const which = period === 'day' ? 'daily' : 'monthly';
    return new BudgetExceededError(
      `Your ${which} budget of ${formatUsd(limit)} is used up (${formatUsd(spent)} spent), so I cannot answer until it resets at ${describeReset(resetsAt, now, this.options.timeZone)}. Ask an admin if you need more.`,
      period,
      resetsAt,
    );
  }

  /** One warning per period once the spend reaches `warn_at` of a limit. */
  private async warnIfNear(ctx: Ctx, hold: BudgetHold, sessionId: string | null, periods: BudgetPeriods, now: Date, totals: { day: number | null; month: number | null }): Promise<void> {
    const warnAt = this.options.config().warn_at;
    const checks = [
      { period: 'day' as const, key: periods.day, limit: hold.dailyUsd, spent: totals.day, resets: periods.dayEnd, ttl: 2 * DAY_MS },
      { period: 'month' as const, key: periods.month, limit: hold.monthlyUsd, spent: totals.month, resets: periods.monthEnd, ttl: 32 * DAY_MS },
    ];
    for (const c of checks) {
      if (c.limit === null || c.spent === null || c.limit === 0 || toUsd(c.spent) < c.limit * warnAt) continue;
      if (!(await this.deps.ledger.once(hold.userId, `warn:${c.period}:${c.key}`, c.ttl))) continue;
      const spent = toUsd(c.spent);
      const which = c.period === 'day' ? 'daily' : 'monthly';
      await this.deps.notices.tell(
        ctx,
        hold.userId,
        sessionId,
        `budget:${hold.userId}:warn:${c.period}:${c.key}`,
        `⚠️ You have used ${Math.floor((spent / c.limit) * 100)} % of your ${which} budget (${spentOf(spent, c.limit)}). It resets at ${describeReset(c.resets, now, this.options.timeZone)}.`,
      );
    }
  }
}


