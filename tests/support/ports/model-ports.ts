import type { Ctx } from '../../../server/common/ctx';
import {
  ModelAbortError,
  ModelCallJobError,
  type ChatMessage,
  type ChatResult,
  type ModelCallInput,
  type ModelCaller,
  type ModelCallJob,
  type ModelCallJobs,
  type ModelCallService,
  type ModelRole,
  type ModelRouteInfo,
  type ToolCall,
} from '../../../server/modules/models';

/** One scripted answer: text and/or native tool calls, an error to throw, or a function of the call. */
export type ScriptedAnswer =
  | { text?: string; toolCalls?: ToolCall[] }
  | { error: Error }
  | ((input: ModelCallInput, signal?: AbortSignal) => Promise<ChatResult | { text?: string; toolCalls?: ToolCall[] }>);

/** A call as the model caller received it (messages copied, since callers keep growing their history). */
export interface RecordedCall {
  input: ModelCallInput;
  messages: ChatMessage[];
}

const USAGE = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: false };

/**
 * The model caller port answered from a script, in order; a call past the end of the script fails the
 * test loudly. `info` describes the route the agent sees (context window, native tools, vision).
 */
export class ScriptedModelCaller implements ModelCaller {
  readonly calls: RecordedCall[] = [];
  private readonly script: ScriptedAnswer[];

  constructor(
    script: ScriptedAnswer[] = [],
    private readonly route: Partial<ModelRouteInfo> = {},
  ) {
    this.script = [...script];
  }

  /** Appends answers for later calls. */
  then(...answers: ScriptedAnswer[]): this {
    this.script.push(...answers);
    return this;
  }

  info(_role: ModelRole): ModelRouteInfo {
    return { provider: 'scripted', model: 'scripted-1', contextWindow: 32_000, supportsTools: true, supportsVision: false, usingMock: false, ...this.route };
  }

  async call(_ctx: Ctx, input: ModelCallInput, signal?: AbortSignal): Promise<ChatResult> {
    this.calls.push({ input, messages: structuredClone(input.messages) });
    if (signal?.aborted) throw new ModelAbortError('aborted before the call');
    const answer = this.script.shift();
    if (!answer) throw new Error(`ScriptedModelCaller: no answer scripted for call ${this.calls.length}`);
    if (typeof answer === 'function') return this.result(await answer(input, signal));
    if ('error' in answer) throw answer.error;
    return this.result(answer);
  }

  private result(answer: ChatResult | { text?: string; toolCalls?: ToolCall[] }): ChatResult {
    if ('finishReason' in answer) return answer;
    const toolCalls = answer.toolCalls ?? [];
    return { text: answer.text ?? '', toolCalls, finishReason: toolCalls.length ? 'tool_calls' : 'stop', usage: { ...USAGE }, model: 'scripted-1', provider: 'scripted' };
  }
}

/**
 * The `model-calls` queue in process: runs each job with the service's `execute` (the worker side) and
 * turns failures into what the producer sees (`ModelCallJobError` with the wire error), retrying
 * `retry` and `rate-limit` dispositions up to `maxRetries` like the queue. Records every attempt.
 */
export class InProcessModelCallJobs implements ModelCallJobs {
  readonly attempts: Array<{ provider: string; model: string; outcome: 'ok' | 'retry' | 'rate-limit' | 'final'; retryAfterMs?: number }> = [];
  service: Pick<ModelCallService, 'execute' | 'failure'> | null = null;

  constructor(private readonly maxRetries = 0) {}

  async run(_ctx: Ctx, job: ModelCallJob, signal?: AbortSignal): Promise<ChatResult> {
    const service = this.service;
    if (!service) throw new Error('InProcessModelCallJobs: set .service before the first call');
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw new ModelAbortError('the turn was stopped');
      try {
        const result = await service.execute(job, signal);
        this.attempts.push({ provider: job.provider, model: job.model, outcome: 'ok' });
        return result;
      } catch (err) {
        if (signal?.aborted) throw new ModelAbortError('the turn was stopped');
        const failure = service.failure(err);
        this.attempts.push({ provider: job.provider, model: job.model, outcome: failure.disposition, retryAfterMs: failure.retryAfterMs });
        if (failure.disposition === 'final' || attempt >= this.maxRetries) {
          const wire = JSON.parse(JSON.stringify(failure.wire)) as typeof failure.wire; // as it crosses the queue
          throw new ModelCallJobError(wire, wire.message);
        }
      }
    }
  }
}
