import type { Clock } from '../common/clock';
import type { Ctx } from '../common/ctx';
import type { Logger } from '../common/logger';
import type { Metrics } from '../common/metrics';
import { localTimeZone } from '../common/time-zone';
import type { AppConfig } from '../config';
import type { Db } from '../persistence/db';
import type { AuditService } from '../modules/audit';
import type { ResultChannels, ResultDelivery } from '../modules/beats';
import { BudgetService, PriceTable, type BudgetNotices } from '../modules/budgets';
import type { NoticeSender } from '../modules/events';
import { Session } from '../modules/sessions';
import { RedisBudgetLedger } from '../redis/redis-budget-ledger';
import type { Redis } from 'ioredis';

/**
 * Budget notices go to the chat of the session the call worked for; calls without one (or in a session
 * without a chat of its own: a beat's, a webhook's) tell the user in their principal chat.
 */
class SessionBudgetNotices implements BudgetNotices {
  constructor(private readonly deps: { db: Db; notices: NoticeSender; results: () => ResultDelivery; channels: ResultChannels; logger: Logger }) {}

  async tell(ctx: Ctx, userId: string, sessionId: string | null, key: string, text: string): Promise<void> {
    try {
      const session = sessionId ? await this.deps.db.repo(ctx, Session).findOneBy({ id: sessionId }) : null;
      if (session && this.deps.channels.names().includes(session.channel)) {
        await this.deps.notices.notify(ctx, { channel: session.channel, chatId: session.chatId, key, sessionId: session.id, level: 'warn' }, text);
        return;
      }
      await this.deps.results().deliver(ctx, { userId, target: null, key, text });
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message, userId }, 'could not send a budget notice');
    }
  }
}

/** The budget guard of a process: prices from `pricing`, limits from `budgets`, the ledger on Redis. */
export function createBudgets(deps: {
  config: AppConfig;
  db: Db;
  redis: Redis;
  audit: AuditService;
  notices: NoticeSender;
  results: () => ResultDelivery;
  channels: ResultChannels;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
}): BudgetService {
  const { config } = deps;
  let timeZone: string | undefined;
  return new BudgetService(
    {
      db: deps.db,
      ledger: new RedisBudgetLedger(deps.redis, config.redis.prefix),
      prices: new PriceTable(config.pricing),
      audit: deps.audit,
      notices: new SessionBudgetNotices({ db: deps.db, notices: deps.notices, results: deps.results, channels: deps.channels, logger: deps.logger }),
      clock: deps.clock,
      metrics: deps.metrics,
    },
    {
      config: () => config.budgets,
      // Read at the first budget check, not at start: the process's first Intl call sets up ICU's time zones
      // (≈ 25 ms of CPU), which the start does not need otherwise.
      get timeZone() {
        return (timeZone ??= config.budgets.timezone ?? localTimeZone());
      },
    },
  );
}
