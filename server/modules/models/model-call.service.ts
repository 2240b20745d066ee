import type { Ctx } from '../../common/ctx';
import { NO_BUDGETS, type BudgetGuard, type BudgetHold } from './budget-guard';
import type { ModelCallInput, ModelCaller, ModelRouteInfo } from './model-caller';
import type { ChatResult, Usage } from './model-provider';
import type { ModelRole, ModelRoute, ModelRouter } from './model-router';
import { estimateMessages, estimateTokens, estimateTools } from './token-estimator';
import { classifyModelError, deserializeModelError, ModelAbortError, serializeModelError, type SerializedModelError } from './model.errors';

/** One call on one route, as a `model.call` job carries it. */
export interface ModelCallJob {
  input: ModelCallInput;
  provider: string;
  model: string;
}

/** A failure as it crosses the queue: the provider's error, and whether text already reached subscribers. */
export type WireModelError = SerializedModelError & { streamed?: boolean };

/** What the queue should do with a failed call. */
export interface ModelCallFailure {
  wire: WireModelError;
  disposition: 'retry' | 'rate-limit' | 'final';
  retryAfterMs: number;
}

/** Port: runs one call through the provider's `model-calls` queue (jobs/); throws `ModelCallJobError` on failure. */
export interface ModelCallJobs {
  run(ctx: Ctx, job: ModelCallJob, signal?: AbortSignal): Promise<ChatResult>;
}

/** Port: executes a call on a route in this process (streams the text as ReplyDelta events). */
export interface ModelExecutor {
  execute(route: ModelRoute, input: ModelCallInput, signal?: AbortSignal): Promise<ChatResult>;
}

/** Port: when each provider last served an interactive call (background calls wait for a grace period). */
export interface InteractiveMarks {
  last(provider: string): Promise<number>;
  mark(provider: string, at: number): Promise<void>;
}

/** A failed job, as the producer sees it. */
export class ModelCallJobError extends Error {
  constructor(readonly wire: WireModelError | null, message: string) {
    super(message);
    this.name = 'ModelCallJobError';
  }
}

/**
 * Model calls (DESIGN §2): `call` tries the role's routes in order through the queue, falling back to
 * the next route unless text was already streamed, the prompt does not fit, or the turn was stopped;
 * `execute` is what a worker does with one job: background calls wait `backgroundGraceMs` after the
 * provider's last interactive call, then the call runs on its route.
 */
export class ModelCallService implements ModelCaller {
  constructor(
    private readonly router: ModelRouter,
    private readonly deps: { jobs: ModelCallJobs; executor: ModelExecutor; marks: InteractiveMarks; budgets?: BudgetGuard },
    private readonly options: { backgroundGraceMs: number; onFallback?: (from: string, err: string | undefined) => void },
  ) {}

  info(role: ModelRole): ModelRouteInfo {
    const { provider, model } = this.router.primary(role);
    return {
      provider: provider.name,
      model,
      contextWindow: provider.contextWindow,
      supportsTools: provider.supportsTools,
      supportsVision: provider.supportsVision,
      usingMock: this.router.usingMock,
    };
  }

  /**
   * One call for a role. The budget guard is asked first: it holds the call's estimate against the
   * paying user's budget (or refuses with BudgetExceededError, or, with `on_exceed: downgrade`, the call
   * goes to the downgrade route); after the call the real cost is charged, after a failure the hold is
   * freed. The result carries `costUsd`.
   */
  async call(ctx: Ctx, input: ModelCallInput, signal?: AbortSignal): Promise<ChatResult> {
    const budgets = this.deps.budgets ?? NO_BUDGETS;
    const userId = input.chargeTo !== undefined ? input.chargeTo : ctx.userId;
    const sessionId = input.stream?.sessionId ?? null;
    let routes = this.router.routes(input.role);
    const primary = routes[0]!;
    const admission = await budgets.admit(ctx, {
      userId,
      provider: primary.provider.name,
      model: primary.model,
      promptTokens: () => estimateMessages(input.messages) + estimateTools(input.tools),
      maxTokens: input.maxTokens,
      sessionId,
    });
    let hold: BudgetHold | null = null;
    let maxTokens = input.maxTokens;
    if (admission.kind === 'exceeded') {
      const downgrade = budgets.onExceed === 'downgrade' ? this.router.downgradeRoutes() : null;
      if (!downgrade || !userId) throw admission.error;
      routes = downgrade;
      await budgets.downgraded(ctx, userId, sessionId, admission.error);
    } else {
      hold = admission.hold;
      if (admission.maxTokens !== null) maxTokens = Math.min(maxTokens ?? Number.POSITIVE_INFINITY, admission.maxTokens);
    }
    let result: ChatResult;
    try {
      result = await this.tryRoutes(ctx, maxTokens === input.maxTokens ? input : { ...input, maxTokens }, routes, signal);
    } catch (err) {
      if (hold) await budgets.release(ctx, hold);
      throw err;
    }
    const costUsd = await budgets.settle(ctx, { userId, sessionId, hold }, result);
    return { ...result, costUsd };
  }

  private async tryRoutes(ctx: Ctx, input: ModelCallInput, routes: readonly ModelRoute[], signal?: AbortSignal): Promise<ChatResult> {
    for (let i = 0; ; i++) {
      const route = routes[i]!;
      if (signal?.aborted) throw new ModelAbortError('aborted before the call');
      try {
        return await this.deps.jobs.run(ctx, { input, provider: route.provider.name, model: route.model }, signal);
      } catch (err) {
        if (signal?.aborted) throw new ModelAbortError('the turn was stopped');
        const wire = err instanceof ModelCallJobError ? err.wire : null;
        const last = i === routes.length - 1 || wire?.streamed || wire?.kind === 'context-length' || wire?.kind === 'abort';
        if (last) throw wire ? deserializeModelError(wire) : err;
        this.options.onFallback?.(`${route.provider.name}/${route.model}`, wire?.message);
      }
    }
  }

  /**
   * Prices an embeddings call that ran on `provider`/`model` and charges it to the acting user's budget:
   * the input tokens the server reported, else estimated from the texts (which loads the tokenizer's
   * tables, ≈ 0.4 s, on a process's first count: with a report, an API process's first search does not).
   * Embeddings are not refused over budget: without them memory search only falls back to keywords, for everyone.
   */
  async chargeEmbeddings(ctx: Ctx, provider: string, model: string, texts: string[], reportedTokens: number | null = null): Promise<{ usage: Usage; costUsd: number | null }> {
    const estimated = reportedTokens === null;
    const inputTokens = estimated ? texts.reduce((n, t) => n + estimateTokens(t), 0) : reportedTokens;
    const usage: Usage = { inputTokens, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, estimated };
    const costUsd = await (this.deps.budgets ?? NO_BUDGETS).settle(ctx, { userId: ctx.userId, sessionId: null, hold: null }, { text: '', toolCalls: [], finishReason: 'stop', usage, model, provider });
    return { usage, costUsd };
  }

  /** When a background call must still wait (ms epoch), or null when it may run now. */
  async waitUntil(job: ModelCallJob): Promise<number | null> {
    if (job.input.priority === 'interactive') return null;
    const at = (await this.deps.marks.last(job.provider)) + this.options.backgroundGraceMs;
    return at > Date.now() ? at : null;
  }

  /**
   * Runs one job on its route; interactive calls mark the provider busy before and after (`marked`: the
   * caller does that itself, in the same round trips as it takes and frees the provider's slot).
   */
  async execute(job: ModelCallJob, signal?: AbortSignal, marked = false): Promise<ChatResult> {
    const interactive = job.input.priority === 'interactive' && !marked;
    if (interactive) await this.deps.marks.mark(job.provider, Date.now());
    try {
      return await this.deps.executor.execute(this.routeOf(job), job.input, signal);
    } finally {
      if (interactive) await this.deps.marks.mark(job.provider, Date.now());
    }
  }

  /** How the queue should treat an error thrown by `execute`. */
  failure(err: unknown): ModelCallFailure {
    const kind = classifyModelError(err);
    const wire: WireModelError = { ...serializeModelError(err), streamed: (err as { streamed?: boolean }).streamed };
    if (kind === 'rate-limit' && !wire.streamed) return { wire, disposition: 'rate-limit', retryAfterMs: wire.retryAfterMs ?? 1000 };
    if (kind === 'retry' && !wire.streamed) return { wire, disposition: 'retry', retryAfterMs: 0 };
    return { wire, disposition: 'final', retryAfterMs: 0 };
  }

  private routeOf(job: ModelCallJob): ModelRoute {
    const found = [...this.router.routes(job.input.role), ...(this.router.downgradeRoutes() ?? [])].find((r) => r.provider.name === job.provider && r.model === job.model);
    if (found) return found;
    const provider = this.router.providers().find((p) => p.name === job.provider);
    if (!provider) throw new Error(`no provider ${job.provider}`);
    return { provider, model: job.model };
  }
}

/** The failure carried in a failed job's reason, or null when it is not one of ours. */
export function parseWireModelError(message: string): WireModelError | null {
  try {
    const parsed = JSON.parse(message) as WireModelError;
    return typeof parsed?.kind === 'string' ? parsed : null;
  } catch {
    return null;
  }
}
