export { BudgetService, type BudgetNotices, type BudgetServiceOptions } from './budget.service';
export { BudgetStatus } from './budget.types';
export { UserBudget } from './user-budget.entity';
export { PriceTable, type ModelPrice } from './pricing';
export { periodsAt, describeReset, type BudgetPeriods } from './budget-periods';
export { formatUsd } from './budget-format';
export type { BudgetLedger, LedgerPeriods, LedgerLimits, ReserveResult } from './budget-ledger';
