import type { SessionEventPublisher } from '../events';
import type { ChatResult, ModelRoute } from '../models';
import { DeltaCoalescer } from './delta-coalescer';
import type { ModelCallInput } from './model-caller';

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
      const result = await route.provider.chat(
        { model: route.model, messages: input.messages, tools: input.tools },
        { signal, onDelta: coalescer ? (t) => coalescer.push(t) : undefined },
      );
      return result;
    } catch (err) {
      if (coalescer?.started && err && typeof err === 'object') Object.assign(err, { streamed: true });
      throw err;
    } finally {
      await coalescer?.close().catch(() => undefined);
    }
  }
}
