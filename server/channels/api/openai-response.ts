import type { ToolCall } from '../../modules/models';
import type { CompletionOutcome } from './api-channel';
import type { ApiModel } from './api-channel';

/** Server start, as `created` of the models (OpenAI gives each model's creation time). */
const STARTED = Math.floor(Date.now() / 1000);

export function modelObject(m: ApiModel) {
  return { id: m.id, object: 'model' as const, created: STARTED, owned_by: 'muninn', description: m.description };
}

export function modelList(models: ApiModel[]) {
  return { object: 'list' as const, data: models.map(modelObject) };
}

function wireToolCalls(calls: ToolCall[]) {
  return calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
}

function usageOf(o: CompletionOutcome) {
  return { prompt_tokens: o.usage.promptTokens, completion_tokens: o.usage.completionTokens, total_tokens: o.usage.promptTokens + o.usage.completionTokens };
}

/** The non-streaming answer (`object: chat.completion`). */
export function completionBody(o: CompletionOutcome) {
  return {
    id: o.id,
    object: 'chat.completion' as const,
    created: o.created,
    model: o.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: o.toolCalls.length && !o.text ? null : o.text, refusal: null, ...(o.toolCalls.length ? { tool_calls: wireToolCalls(o.toolCalls) } : {}) },
        logprobs: null,
        finish_reason: o.finishReason,
      },
    ],
    usage: usageOf(o),
  };
}

/** Writes the `data:` chunks of a streamed answer in OpenAI's shape (`object: chat.completion.chunk`). */
export class ChunkWriter {
  private first = true;

  constructor(
    private readonly head: { id: string; created: number; model: string },
    private readonly includeUsage: boolean,
    private readonly write: (line: string) => void,
  ) {}

  private chunk(delta: Record<string, unknown>, finishReason: string | null): void {
    const body = {
      ...this.head,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(this.includeUsage ? { usage: null } : {}),
    };
    this.write(`data: ${JSON.stringify(body)}\n\n`);
  }

  /** A piece of the reply; the first chunk also carries the role. */
  delta(text: string): void {
    this.chunk(this.first ? { role: 'assistant', content: text } : { content: text }, null);
    this.first = false;
  }

  /** Tool calls (whole, one chunk), the finish reason, the usage chunk when asked for, then `[DONE]`. */
  end(o: CompletionOutcome): void {
    if (this.first) this.delta('');
    if (o.toolCalls.length) this.chunk({ tool_calls: wireToolCalls(o.toolCalls).map((c, index) => ({ index, ...c })) }, null);
    this.chunk({}, o.finishReason);
    if (this.includeUsage) this.write(`data: ${JSON.stringify({ ...this.head, object: 'chat.completion.chunk', choices: [], usage: usageOf(o) })}\n\n`);
    this.write('data: [DONE]\n\n');
  }

  /** An error after the stream began: OpenAI's error object as a `data:` line (clients raise it), then `[DONE]`. */
  error(body: unknown): void {
    this.write(`data: ${JSON.stringify(body)}\n\n`);
    this.write('data: [DONE]\n\n');
  }
}
