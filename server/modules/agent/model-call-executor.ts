import type { SessionEventPublisher } from '../events';
import type { ChatResult, ModelRoute } from '../models';
import { DeltaCoalescer } from './delta-coalescer';
import type { ModelCallInput } from '../models';

/**
 * Runs one model call on one route (what a `model-calls` job does): streams the text as ReplyDelta
 * events of the turn when asked, coalescing deltas to at most one event per 50 ms after the first.
 */
export class ModelCallExecutor {
  constructor(
    private readonly events: SessionEventPublisher,
    private readonly coalesceMs = 50,
  ) {}

  /**
   * Returns the result; on failure throws the provider's error with `streamed: true` set on it when
   * some text already reached subscribers (then no fallback model may take over).
   */
  async execute(route: ModelRoute, input: ModelCallInput, signal?: AbortSignal): Promise<ChatResult> {
    const stream = input.stream;
    const coalescer = stream
      ? new DeltaCoalescer((text) => this.events.publish(stream.sessionId, { type: 'ReplyDelta', turnId: stream.turnId, text }), this.coalesceMs)
      : null;
    try {
      const onDelta = coalescer ? (stream?.holdToolCallText ? holdBackToolCallText((t) => coalescer.push(t)) : (t: string) => coalescer.push(t)) : undefined;
      const result = await route.provider.chat({ model: route.model, messages: input.messages, tools: input.tools, maxTokens: input.maxTokens, toolChoice: input.toolChoice }, { signal, onDelta });
      return result;
    } catch (err) {
      if (coalescer?.started && err && typeof err === 'object') Object.assign(err, { streamed: true });
      throw err;
    } finally {
      if (coalescer) {
        // The last deltas are handed over at once (with the first, when the model was that quick; the
        // publisher keeps their order), and their answer is not waited for: the turn goes on after one
        // turn of the event loop, which sends them before the reply is stored.
        void coalescer.close().catch(() => undefined);
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }
}

const TOOL_CALLS_PREFIX = '{"tool_calls"';

/** Whether text that starts an answer is a JSON tool_calls block, plain text, or too short to tell. */
export function classifyAnswerStart(head: string): 'tool-calls' | 'text' | 'undecided' {
  let rest = head.replace(/^\s+/, '');
  if (!rest) return 'undecided';
  if ('```json'.startsWith(rest)) return 'undecided';
  const fence = /^```(json)?\s*/.exec(rest);
  if (fence) {
    rest = rest.slice(fence[0].length);
    if (!rest) return 'undecided';
  }
  const compact = rest.replace(/^\{\s*/, '{');
  if (compact.length >= TOOL_CALLS_PREFIX.length) return compact.startsWith(TOOL_CALLS_PREFIX) ? 'tool-calls' : 'text';
  if (compact === '{' && /^\{\s*$/.test(rest)) return 'undecided';
  return TOOL_CALLS_PREFIX.startsWith(compact) ? 'undecided' : 'text';
}

/**
 * For models that call tools with a JSON block in their text: holds the first characters back until it
 * is clear whether the answer is such a block (then nothing is streamed; the tool calls show up as
 * ToolCallEvents) or ordinary text (then it is streamed as usual).
 */
export function holdBackToolCallText(push: (text: string) => void): (text: string) => void {
  let head = '';
  let state: 'undecided' | 'text' | 'tool-calls' = 'undecided';
  return (text) => {
    if (state === 'text') return push(text);
    if (state === 'tool-calls') return;
    head += text;
    state = classifyAnswerStart(head);
    if (state === 'text') push(head);
  };
}
