import type { Metrics } from '../common/metrics';
import type { ModelExecutor } from '../modules/models';
import type { SessionEvent, SessionEventBody, SessionEventPublisher } from '../modules/events';

/** Turns whose start was seen but not their end; older ones are forgotten (a crashed turn never ends). */
const MAX_OPEN_TURNS = 10_000;

/**
 * Measures turns from the events they publish: `TurnStarted` starts the clock, the first `ReplyDelta` gives
 * the first-delta latency, `TurnFinished` counts the turn by status and observes its duration. The events of
 * one turn are published by the process that runs it, so the clock is local.
 */
export function meteredEvents(inner: SessionEventPublisher, metrics: Metrics, now: () => number = () => performance.now()): SessionEventPublisher {
  const open = new Map<string, { started: number; delta: boolean }>();
  const observe = (body: SessionEventBody) => {
    const at = now();
    if (body.type === 'TurnStarted') {
      if (open.size >= MAX_OPEN_TURNS) open.delete(open.keys().next().value!);
      open.set(body.turnId, { started: at, delta: false });
    } else if (body.type === 'ReplyDelta') {
      const turn = open.get(body.turnId);
      if (turn && !turn.delta) {
        turn.delta = true;
        metrics.observe('muninn_turn_first_delta_seconds', {}, (at - turn.started) / 1000);
      }
    } else if (body.type === 'TurnFinished') {
      metrics.inc('muninn_turns_total', { status: body.status });
      const turn = open.get(body.turnId);
      open.delete(body.turnId);
      if (turn) metrics.observe('muninn_turn_duration_seconds', { status: body.status }, (at - turn.started) / 1000);
    }
  };
  return {
    publish: async (sessionId: string, body: SessionEventBody): Promise<SessionEvent> => {
      const event = await inner.publish(sessionId, body);
      observe(body);
      return event;
    },
  };
}

/** Measures each model call a worker runs (duration by outcome) and the tokens it used. */
export function meteredExecutor(inner: ModelExecutor, metrics: Metrics, now: () => number = () => performance.now()): ModelExecutor {
  return {
    execute: async (route, input, signal) => {
      const started = now();
      const labels = { provider: route.provider.name, model: route.model };
      try {
        const result = await inner.execute(route, input, signal);
        metrics.observe('muninn_model_call_duration_seconds', { ...labels, outcome: 'ok' }, (now() - started) / 1000);
        const byModel = { provider: result.provider, model: result.model };
        metrics.inc('muninn_model_tokens_total', { ...byModel, kind: 'input' }, result.usage.inputTokens);
        metrics.inc('muninn_model_tokens_total', { ...byModel, kind: 'output' }, result.usage.outputTokens);
        return result;
      } catch (err) {
        metrics.observe('muninn_model_call_duration_seconds', { ...labels, outcome: 'error' }, (now() - started) / 1000);
        throw err;
      }
    },
  };
}
