import type { Ctx } from '../../common/ctx';
import type { BudgetExceededError } from '../../common/errors';
import type { ChatResult } from './model-provider';

// === The budget port (DESIGN §10, Budgets)
// `ModelCallService` asks the guard before every model call and tells it the outcome after, so every
// caller (turns, beats, webhooks, the summarizer, the OpenAI-compatible API) is covered in one place.
// The budgets module implements it with a Redis ledger that holds across processes.

/** What a call is about to cost its user, as the guard sees it before the call. */
export interface BudgetRequest {
  /** Whose budget pays; null for the server's own work (never limited, only priced). */
  userId: string | null;
  provider: string;
  model: string;
  /**
   * Estimated prompt tokens (messages + tool schemas). A function: the prompt is counted only for a user
   * with a limit, not on every call.
   */
  promptTokens: () => number;
  /** The caller's own output limit, if any. */
  maxTokens?: number;
  /** The session the call works for: budget notices go to its chat. */
  sessionId: string | null;
}

/** What the guard knows of a paying user's call between admitting and settling it. */
export interface BudgetHold {
  /** The estimate held in the ledger; null when nothing was held (an unlimited user). */
  id: string | null;
  userId: string;
  /** The user's trust when the call was admitted (cost metrics are labelled by it, never by user). */
  trust: string;
  /** The user's limits in USD; null: unlimited. */
  dailyUsd: number | null;
  monthlyUsd: number | null;
}

/**
 * The guard's answer: `admitted` with the hold to settle or release (null for the server's own work) and
 * the output limit the call must respect (null: none), or `exceeded` with the error to show.
 */
export type BudgetAdmission = { kind: 'admitted'; hold: BudgetHold | null; maxTokens: number | null } | { kind: 'exceeded'; error: BudgetExceededError };

/** A finished call, to be priced and charged. */
export interface BudgetCharge {
  userId: string | null;
  sessionId: string | null;
  hold: BudgetHold | null;
}

/** Port: spending limits per user, asked before each model call. */
export interface BudgetGuard {
  /** What happens to a call over budget: refused (`block`) or sent to the downgrade route. */
  readonly onExceed: 'block' | 'downgrade';
  /** Reserves the call's estimate against the user's budget, atomically across processes. */
  admit(ctx: Ctx, req: BudgetRequest): Promise<BudgetAdmission>;
  /** After a successful call: prices it, charges the user and frees the hold; returns the cost in USD (null: no price). */
  settle(ctx: Ctx, charge: BudgetCharge, result: ChatResult): Promise<number | null>;
  /** After a failed call: frees the held estimate, nothing is charged. */
  release(ctx: Ctx, hold: BudgetHold): Promise<void>;
  /** A call over budget went to the downgrade route; the user is told once per period. */
  downgraded(ctx: Ctx, userId: string, sessionId: string | null, reason: BudgetExceededError): Promise<void>;
}

/** No budgets: every call is admitted and nothing is priced (unit tests, tools without the app). */
export const NO_BUDGETS: BudgetGuard = {
  onExceed: 'block',
  admit: async () => ({ kind: 'admitted', hold: null, maxTokens: null }),
  settle: async (_ctx, _charge, result) => result.usage.costUsd ?? null,
  release: async () => undefined,
  downgraded: async () => undefined,
};
