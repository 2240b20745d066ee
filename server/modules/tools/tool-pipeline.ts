import { performance } from 'node:perf_hooks';
import type { Ctx } from '../../common/ctx';
import { AppError } from '../../common/errors';
import type { AuditService } from '../audit';
import { effectiveMinTrust, mayUseTool, ToolActionRequiredError, ToolRefusedError, type Tool, type ToolContext } from './tool';
import { clip, describeZodError, parseArgsJson, renderOutput, summarizeArgs } from './tool-args';
import type { ToolApproval } from './tool-approval.entity';
import { ToolApprovalStatus } from './tool-approval.entity';
import type { ToolApprovalService } from './tool-approval.service';
import { isApproved } from './tool-approval.types';
import type { ToolRegistry } from './tool-registry';

/** One tool call as the model asked for it. */
export interface ToolCallRequest {
  id: string;
  name: string;
  /** Raw JSON text of the arguments object. */
  arguments: string;
}

export type ToolCallStatus = 'ok' | 'error' | 'refused' | 'denied' | 'timeout' | 'invalid';

/** What became of one call; `output` is what goes back to the model. */
export interface ToolCallOutcome {
  id: string;
  name: string;
  ok: boolean;
  output: string;
  status: ToolCallStatus;
  durationMs: number;
}

/** Optional callbacks of one `runAll`; a hook that throws is logged and ignored. */
export interface ToolPipelineHooks {
  onStart?(call: ToolCallRequest): void | Promise<void>;
  onEnd?(outcome: ToolCallOutcome): void | Promise<void>;
  /** A call paused for approval; tell the user "Approval needed: /approve <id> allow_once|allow_always|deny". */
  onApprovalRequested?(approval: ToolApproval, call: ToolCallRequest): void | Promise<void>;
}

export interface ToolPipelineOptions {
  /** Timeout of one tool run (not of the wait for an approval). `tools.timeout_ms`. */
  timeoutMs: number;
  /** Output longer than this is cut with a "[truncated N chars]" note. `tools.max_output_chars`. */
  maxOutputChars: number;
  /** Calls of one batch that run at once. `tools.max_parallel`. */
  maxParallel: number;
}

export interface ToolPipelineDeps {
  registry: ToolRegistry;
  approvals: ToolApprovalService;
  audit: AuditService;
}

const TIMEOUT = Symbol('timeout');
const ABORTED = Symbol('aborted');

/**
 * Runs the tool calls of one model response: unknown tool → `error`; trust re-checked against the
 * sender (→ `refused`, audited as `tool.refused`); per-channel activation (→ `refused`); arguments parsed
 * and validated (→ `invalid`); approval for `requiresApproval` tools (the call waits; → `denied` when
 * denied or expired); timeout (→ `timeout`, the tool's signal is aborted); output cap. At most
 * `maxParallel` calls run at once and outcomes come back in call order. Every call is audited as
 * `tool.call`. Nothing throws: failures become outcomes so the turn continues.
 */
export class ToolPipeline {
  private readonly options: ToolPipelineOptions;

  constructor(
    private readonly deps: ToolPipelineDeps,
    options: ToolPipelineOptions,
  ) {
    if (!(options.maxParallel >= 1)) throw new Error(`ToolPipelineOptions.maxParallel must be ≥ 1, got ${options.maxParallel}.`);
    if (!(options.timeoutMs > 0)) throw new Error(`ToolPipelineOptions.timeoutMs must be > 0, got ${options.timeoutMs}.`);
    this.options = { ...options };
  }

  /** Runs `calls` with at most `maxParallel` at once; the outcomes are in the order of `calls`. */
  async runAll(tc: ToolContext, calls: readonly ToolCallRequest[], hooks: ToolPipelineHooks = {}): Promise<ToolCallOutcome[]> {
    const outcomes = new Array<ToolCallOutcome>(calls.length);
    let next = 0;
    const worker = async () => {
      while (next < calls.length) {
        const index = next++;
        outcomes[index] = await this.runOne(tc, calls[index]!, hooks);
      }
    };
    const workers = Math.min(this.options.maxParallel, calls.length);
    await Promise.all(Array.from({ length: workers }, worker));
    return outcomes;
  }

  /** Runs one call; never throws. */
  async runOne(tc: ToolContext, call: ToolCallRequest, hooks: ToolPipelineHooks = {}): Promise<ToolCallOutcome> {
    const started = performance.now();
    await this.hook(tc.ctx, 'onStart', () => hooks.onStart?.(call));
    let summary = '';
    const finish = async (status: ToolCallStatus, output: string): Promise<ToolCallOutcome> => {
      const outcome: ToolCallOutcome = {
        id: call.id,
        name: call.name,
        ok: status === 'ok',
        output,
        status,
        durationMs: Math.round(performance.now() - started),
      };
      await this.record(tc, 'tool.call', call.name, {
        tool: clip(call.name, 100),
        callId: clip(call.id, 100),
        status,
        durationMs: outcome.durationMs,
        args: summary,
        sessionId: tc.sessionId,
        turnId: tc.turnId ?? null,
        channel: tc.channel,
      });
      await this.hook(tc.ctx, 'onEnd', () => hooks.onEnd?.(outcome));
      return outcome;
    };
    const refuse = async (reason: string): Promise<ToolCallOutcome> => {
      await this.record(tc, 'tool.refused', call.name, {
        tool: call.name,
        args: summary,
        userId: tc.ctx.userId,
        trust: tc.ctx.trust,
        channel: tc.channel,
        sessionId: tc.sessionId,
        reason,
      });
      return finish('refused', `Refused: ${reason}`);
    };

    try {
      const tool = this.deps.registry.get(call.name);
      if (!tool) return await finish('error', `Unknown tool "${clip(call.name, 100)}". Use one of the tools you were given.`);
      const parsed = parseArgsJson(call.arguments);
      summary = parsed.ok ? summarizeArgs(parsed.value) : '(invalid JSON)';

      // Trust and activation are checked here, where the tool runs, not only in what the model was shown.
      if (!mayUseTool(tc.ctx.trust, tool)) {
        return await refuse(`the tool "${tool.name}" needs ${effectiveMinTrust(tool)} trust; the sender is ${tc.ctx.trust}.`);
      }
      if (!(await this.deps.registry.isActive(tc.ctx, tool, tc.channel))) {
        return await refuse(`the tool "${tool.name}" is turned off on the ${tc.channel} channel.`);
      }

      if (!parsed.ok) return await finish('invalid', `Invalid arguments for "${tool.name}": ${parsed.error}.`);
      const validated = tool.schema.safeParse(parsed.value);
      if (!validated.success) {
        return await finish('invalid', `Invalid arguments for "${tool.name}": ${describeZodError(validated.error)}`);
      }
      const args = validated.data;
      summary = this.summaryOf(tool, args);

      if (tool.requiresApproval) {
        const verdict = await this.awaitApproval(tc, tool, call, args, hooks);
        if (verdict === 'aborted') return await finish('error', 'The turn was stopped while the call waited for approval.');
        if (verdict !== 'approved') return await finish('denied', verdict);
      }
      return await this.execute(tc, tool, args, finish, refuse);
    } catch (err) {
      tc.ctx.logger.error({ err, tool: call.name }, 'tool pipeline failure');
      return finish('error', `The tool "${clip(call.name, 100)}" failed: ${errorText(err)}`);
    }
  }

  /** Asks for approval and waits; 'approved', 'aborted' or the message for a denial. */
  private async awaitApproval(
    tc: ToolContext,
    tool: Tool,
    call: ToolCallRequest,
    args: unknown,
    hooks: ToolPipelineHooks,
  ): Promise<'approved' | 'aborted' | string> {
    const { approval, autoApproved } = await this.deps.approvals.request(tc.ctx, {
      sessionId: tc.sessionId,
      tool: tool.name,
      args,
      turnId: tc.turnId ?? null,
      argsSummary: this.summaryOf(tool, args),
    });
    if (autoApproved) return 'approved';
    await this.hook(tc.ctx, 'onApprovalRequested', () => hooks.onApprovalRequested?.(approval, call));
    let status: ToolApprovalStatus;
    try {
      status = await this.deps.approvals.waitForDecision(tc.ctx, approval.id, tc.signal);
    } catch (err) {
      if (!tc.signal.aborted) throw err;
      await this.deps.approvals.withdraw(tc.ctx, approval.id);
      return 'aborted';
    }
    if (isApproved(status)) return 'approved';
    return status === ToolApprovalStatus.EXPIRED
      ? `The call of "${tool.name}" was not approved in time (approval ${approval.id} expired) and did not run.`
      : `The call of "${tool.name}" was denied (approval ${approval.id}) and did not run.`;
  }

  /** Runs the tool with a child signal that fires on turn abort and on timeout. */
  private async execute(
    tc: ToolContext,
    tool: Tool,
    args: unknown,
    finish: (status: ToolCallStatus, output: string) => Promise<ToolCallOutcome>,
    refuse: (reason: string) => Promise<ToolCallOutcome>,
  ): Promise<ToolCallOutcome> {
    if (tc.signal.aborted) return finish('error', 'The turn was stopped before the tool ran.');
    const controller = new AbortController();
    const onParentAbort = () => controller.abort(tc.signal.reason);
    tc.signal.addEventListener('abort', onParentAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = tool.timeoutMs ?? this.options.timeoutMs;
    const timedOut = new Promise<typeof TIMEOUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMEOUT), timeoutMs);
    });
    const aborted = new Promise<typeof ABORTED>((resolve) => {
      controller.signal.addEventListener('abort', () => resolve(ABORTED), { once: true });
    });
    try {
      const running = Promise.resolve().then(() => tool.run({ ...tc, signal: controller.signal }, args));
      const result = await Promise.race([running, timedOut, aborted]);
      if (result === TIMEOUT) {
        controller.abort(new Error(`timed out after ${timeoutMs} ms`));
        return await finish('timeout', `The tool "${tool.name}" did not finish within ${timeoutMs} ms and was stopped.`);
      }
      if (result === ABORTED) return await finish('error', `The tool "${tool.name}" was stopped because the turn was stopped.`);
      return await finish('ok', renderOutput(result, this.options.maxOutputChars));
    } catch (err) {
      if (err instanceof ToolRefusedError) return refuse(err.message);
      if (err instanceof ToolActionRequiredError) return finish('error', `The tool "${tool.name}" cannot run yet: ${clip(err.message, 2000)}`);
      if (tc.signal.aborted) return finish('error', `The tool "${tool.name}" was stopped because the turn was stopped.`);
      tc.ctx.logger.warn({ err, tool: tool.name }, 'tool failed');
      return finish('error', `The tool "${tool.name}" failed: ${errorText(err)}`);
    } finally {
      clearTimeout(timer);
      tc.signal.removeEventListener('abort', onParentAbort);
    }
  }

  private summaryOf(tool: Tool, args: unknown): string {
    if (!tool.summarizeArgs) return summarizeArgs(args);
    try {
      return clip(tool.summarizeArgs(args), 200);
    } catch {
      return summarizeArgs(args);
    }
  }

  /** Writes an audit entry; a failing audit write is logged and does not fail the call. */
  private async record(tc: ToolContext, action: string, toolName: string, details: Record<string, unknown>): Promise<void> {
    try {
      await this.deps.audit.record(tc.ctx, action, { type: 'Tool', id: clip(toolName, 100) }, details);
    } catch (err) {
      tc.ctx.logger.error({ err, action, tool: toolName }, 'could not write the audit log');
    }
  }

  private async hook(ctx: Ctx, name: keyof ToolPipelineHooks, fn: () => void | Promise<void> | undefined): Promise<void> {
    try {
      await fn();
    } catch (err) {
      ctx.logger.warn({ err, hook: name }, 'tool pipeline hook failed');
    }
  }
}

/** A short, safe message for the model: AppError messages as they are, others clipped. */
function errorText(err: unknown): string {
  if (err instanceof AppError) return clip(err.message, 300);
  if (err instanceof Error) return clip(err.message || err.name, 300);
  return clip(String(err), 300);
}
