// === Metrics port
// Code that measures something calls this small interface; the Prometheus adapter (server/metrics) is the
// only place that knows prom-client. The catalogue below names every metric once, with its labels.

export const COUNTERS = {
  muninn_turns_total: { help: 'Turns finished, by status (done, failed, cancelled).', labels: ['status'] },
  muninn_model_tokens_total: { help: 'Model tokens, by provider, model and kind (input, output).', labels: ['provider', 'model', 'kind'] },
  muninn_model_cost_usd_total: { help: 'Cost of model calls in USD (provider-reported or from the price table), by provider, model and the trust level of the user who pays (never by user).', labels: ['provider', 'model', 'trust'] },
  muninn_budget_refusals_total: { help: 'Model calls refused (or downgraded) because the paying user\'s budget was spent, by trust level.', labels: ['trust'] },
  muninn_job_failures_total: { help: 'Failed queue job attempts, by queue.', labels: ['queue'] },
  muninn_deliveries_total: { help: 'Message chunks delivered to platform chats, by channel.', labels: ['channel'] },
  muninn_delivery_retries_total: { help: 'Failed deliveries that are tried again later, by channel.', labels: ['channel'] },
  muninn_deliveries_given_up_total: { help: 'Deliveries given up after the last attempt or a permanent error, by channel.', labels: ['channel'] },
} as const;

export const HISTOGRAMS = {
  muninn_turn_duration_seconds: { help: 'Time from a turn starting to it finishing, by status.', labels: ['status'], buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] },
  muninn_model_call_duration_seconds: { help: 'Duration of one model call on a worker, by provider, model and outcome (ok, error).', labels: ['provider', 'model', 'outcome'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120] },
  muninn_turn_first_delta_seconds: { help: 'Time from a turn starting to its first streamed reply text.', labels: [], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30] },
} as const;

export const GAUGES = {
  muninn_subscriptions_open: { help: 'GraphQL subscriptions open on this process, by kind.', labels: ['kind'] },
} as const;

export type CounterName = keyof typeof COUNTERS;
export type HistogramName = keyof typeof HISTOGRAMS;
export type GaugeName = keyof typeof GAUGES;
export type MetricLabels = Record<string, string>;

/** Port: records measurements. Every method is cheap and never throws. */
export interface Metrics {
  inc(name: CounterName, labels?: MetricLabels, by?: number): void;
  observe(name: HistogramName, labels: MetricLabels, value: number): void;
  /** Moves a gauge up (positive) or down (negative). */
  add(name: GaugeName, labels: MetricLabels, delta: number): void;
}

/** Records nothing (tools, tests and CLI commands that do not serve /metrics). */
export const NO_METRICS: Metrics = {
  inc: () => undefined,
  observe: () => undefined,
  add: () => undefined,
};
