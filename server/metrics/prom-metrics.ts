import type * as Prom from 'prom-client';
import { COUNTERS, GAUGES, HISTOGRAMS, type CounterName, type GaugeName, type HistogramName, type MetricLabels, type Metrics } from '../common/metrics';
import type { QueueInspector } from '../modules/queues';

// prom-client's classes come from their own files: its index also loads the default metrics and, through
// them, @opentelemetry/api (about 80 modules), which start-up does not need; they load with
// collectProcessMetrics. prom-client has no exports map, so these paths are its own.
/* eslint-disable @typescript-eslint/no-require-imports */
const Registry = require('prom-client/lib/registry') as typeof Prom.Registry;
const Counter = require('prom-client/lib/counter') as typeof Prom.Counter;
const Gauge = require('prom-client/lib/gauge') as typeof Prom.Gauge;
const Histogram = require('prom-client/lib/histogram') as typeof Prom.Histogram;
const loadDefaultMetrics = () => require('prom-client/lib/defaultMetrics') as typeof Prom.collectDefaultMetrics;
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * The Prometheus adapter of the `Metrics` port: one registry per process with the catalogue's counters,
 * histograms and gauges, Node's process metrics, and queue depths read from BullMQ at scrape time.
 */
export class PromMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly counters = new Map<CounterName, Prom.Counter>();
  private readonly histograms = new Map<HistogramName, Prom.Histogram>();
  private readonly gauges = new Map<GaugeName, Prom.Gauge>();
  private queues: QueueInspector | null = null;
  private processMetrics = false;

  constructor() {
    for (const [name, def] of Object.entries(COUNTERS)) {
      this.counters.set(name as CounterName, new Counter({ name, help: def.help, labelNames: [...def.labels], registers: [this.registry] }));
    }
    for (const [name, def] of Object.entries(HISTOGRAMS)) {
      this.histograms.set(name as HistogramName, new Histogram({ name, help: def.help, labelNames: [...def.labels], buckets: [...def.buckets], registers: [this.registry] }));
    }
    for (const [name, def] of Object.entries(GAUGES)) {
      this.gauges.set(name as GaugeName, new Gauge({ name, help: def.help, labelNames: [...def.labels], registers: [this.registry] }));
    }
    const queues = () => this.queues;
    new Gauge({
      name: 'muninn_queue_jobs',
      help: 'Jobs in each queue, by queue and state (waiting, active, delayed, failed, …), read at scrape time.',
      labelNames: ['queue', 'state'],
      registers: [this.registry],
      async collect() {
        this.reset();
        const inspector = queues();
        if (!inspector) return;
        for (const queue of inspector.names()) {
          const counts = await inspector.counts(queue).catch(() => null);
          if (!counts) continue;
          for (const [state, n] of Object.entries(counts)) this.set({ queue, state }, n);
        }
      },
    });
  }

  /**
   * Starts Node's process metrics (CPU, memory, event-loop lag, GC, …): the server calls it once it is
   * ready, and a scrape before that starts them too.
   */
  collectProcessMetrics(): void {
    if (this.processMetrics) return;
    this.processMetrics = true;
    loadDefaultMetrics()({ register: this.registry, prefix: 'muninn_' });
  }

  /** Where queue depths come from (processes connected to Redis). */
  useQueues(inspector: QueueInspector): void {
    this.queues = inspector;
  }

  inc(name: CounterName, labels: MetricLabels = {}, by = 1): void {
    this.counters.get(name)?.inc(labels, by);
  }

  observe(name: HistogramName, labels: MetricLabels, value: number): void {
    this.histograms.get(name)?.observe(labels, value);
  }

  add(name: GaugeName, labels: MetricLabels, delta: number): void {
    this.gauges.get(name)?.inc(labels, delta);
  }

  /** The text exposition format for a scrape. */
  async render(): Promise<{ contentType: string; body: string }> {
    this.collectProcessMetrics();
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
