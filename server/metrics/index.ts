export { PromMetrics } from './prom-metrics';
export { meteredEvents, meteredExecutor } from './turn-metrics';
export { metricsAccess, type MetricsAccess } from './metrics-access';
