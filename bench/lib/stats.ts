/** Latency summary of one series, in milliseconds. */
export interface Summary {
  n: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  min: number;
  max: number;
  /** Sample standard deviation. */
  stdev: number;
}

/** Nearest-rank percentile of an ascending array (p in 0..100). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  const mean = n ? sorted.reduce((s, x) => s + x, 0) / n : Number.NaN;
  const variance = n > 1 ? sorted.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1) : 0;
  return {
    n,
    mean,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    min: sorted[0] ?? Number.NaN,
    max: sorted[n - 1] ?? Number.NaN,
    stdev: Math.sqrt(variance),
  };
}

/** Rounds every number of a summary to 3 decimals (for the JSON file). */
export function rounded(s: Summary): Summary {
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    n: s.n,
    mean: r(s.mean),
    p50: r(s.p50),
    p95: r(s.p95),
    p99: r(s.p99),
    min: r(s.min),
    max: r(s.max),
    stdev: r(s.stdev),
  };
}

/** Rounds to one decimal (rates and MiB in the results). */
export const round1 = (x: number): number => Math.round(x * 10) / 10;
