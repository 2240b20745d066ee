/** Percentiles of a list of samples (milliseconds unless said otherwise). */
export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function percentile(sorted: readonly number[], q: number): number {
  if (!sorted.length) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[idx]!;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((s, x) => s + x, 0) / Math.max(1, sorted.length);
  return { n: sorted.length, p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] ?? NaN, mean };
}

export function median(samples: readonly number[]): number {
  return percentile([...samples].sort((a, b) => a - b), 0.5);
}

/** Milliseconds since an arbitrary origin, sub-millisecond. */
export function now(): number {
  return performance.now();
}

export function fmt(x: number | null | undefined, digits = 1): string {
  if (x === null || x === undefined || Number.isNaN(x)) return '–';
  if (Math.abs(x) >= 1000) return Math.round(x).toString();
  return x.toFixed(digits);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs `worker(i)` in `concurrency` closed loops (each starts its next call when the previous one ended)
 * until `count` calls are done or `durationMs` passed. Returns each call's latency and the wall time.
 */
export async function closedLoop(
  concurrency: number,
  limit: { count?: number; durationMs?: number },
  worker: (loop: number, iteration: number) => Promise<void>,
): Promise<{ latencies: number[]; perLoop: number[][]; wallMs: number }> {
  const latencies: number[] = [];
  const perLoop: number[][] = Array.from({ length: concurrency }, () => []);
  const start = now();
  const deadline = limit.durationMs ? start + limit.durationMs : Infinity;
  let started = 0;
  const loop = async (l: number) => {
    for (let it = 0; ; it++) {
      if ((limit.count !== undefined && started >= limit.count) || now() >= deadline) return;
      started++;
      const t0 = now();
      await worker(l, it);
      const dt = now() - t0;
      latencies.push(dt);
      perLoop[l]!.push(dt);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, l) => loop(l)));
  return { latencies, perLoop, wallMs: now() - start };
}
