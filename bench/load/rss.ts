import { readFileSync } from 'node:fs';
import pg from 'pg';
import { round1 } from '../lib/stats.js';

// The soak's measure: the service's RSS and V8 heap sampled over time, and whether RSS grew.

export async function rssOf(pid: number): Promise<{ rss: number; hwm: number } | null> {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
    return { rss: Math.round((kib('VmRSS') / 1024) * 10) / 10, hwm: Math.round((kib('VmHWM') / 1024) * 10) / 10 };
  } catch {
    return null;
  }
}

/** devstream_nodejs_heap_size_used_bytes from the service's /metrics, in MiB (null when it does not answer). */
export async function heapOf(url: string): Promise<number | null> {
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
    const bytes = Number(/^devstream_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1]);
    return Number.isFinite(bytes) ? Math.round((bytes / 1024 / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

export interface RssSample {
  t_s: number;
  phase: string;
  rss_mib: number | null;
  hwm_mib: number | null;
  /** V8 heap in use, from the service's own /metrics: a leak grows it, allocator slack only RSS. */
  heap_mib: number | null;
  pg_connections: number | null;
}

export class Sampler {
  readonly samples: RssSample[] = [];
  phase = 'setup';
  #timer: NodeJS.Timeout | undefined;
  readonly #t0 = performance.now();
  constructor(
    private readonly pid: number,
    private readonly dbUrl: string,
    private readonly dbName: string,
    private readonly serviceUrl: string,
  ) {}
  async sample(): Promise<RssSample> {
    const m = await rssOf(this.pid);
    const heap = await heapOf(this.serviceUrl);
    let conns: number | null = null;
    const client = new pg.Client({ connectionString: this.dbUrl, connectionTimeoutMillis: 1_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where datname = $1 and application_name = 'devstream-hub'",
        [this.dbName],
      );
      conns = rows[0]?.n ?? null;
    } catch {
      /* Postgres down */
    } finally {
      await client.end().catch(() => {});
    }
    const s = {
      t_s: Math.round((performance.now() - this.#t0) / 100) / 10,
      phase: this.phase,
      rss_mib: m?.rss ?? null,
      hwm_mib: m?.hwm ?? null,
      heap_mib: heap,
      pg_connections: conns,
    };
    this.samples.push(s);
    return s;
  }
  start(everyMs = 5_000): void {
    this.#timer = setInterval(() => void this.sample(), everyMs);
  }
  stop(): void {
    clearInterval(this.#timer);
  }
}

/**
 * RSS over a phase: growth from start to end, and — the verdict — growth after the first third
 * (heap and caches warm up first), against a noise band of max(16 MiB, 5 %).
 */
export function rssVerdict(samples: RssSample[]) {
  const xs = samples.filter((s) => s.rss_mib !== null) as Array<RssSample & { rss_mib: number }>;
  if (xs.length < 2) return null;
  const slopeOf = (ys: typeof xs) => {
    const n = ys.length;
    if (n < 2) return 0;
    const mx = ys.reduce((s, x) => s + x.t_s, 0) / n;
    const my = ys.reduce((s, x) => s + x.rss_mib, 0) / n;
    const sxy = ys.reduce((s, x) => s + (x.t_s - mx) * (x.rss_mib - my), 0);
    const sxx = ys.reduce((s, x) => s + (x.t_s - mx) ** 2, 0);
    return sxx > 0 ? (sxy / sxx) * 60 : 0;
  };
  const start = xs[0]!.rss_mib;
  const end = xs[xs.length - 1]!.rss_mib;
  const settleAt = xs[0]!.t_s + (xs[xs.length - 1]!.t_s - xs[0]!.t_s) / 3;
  const settled = xs.filter((x) => x.t_s >= settleAt);
  const values = xs.map((x) => x.rss_mib);
  const noise = Math.max(16, 0.05 * start);
  const settledGrowth = end - settled[0]!.rss_mib;
  return {
    start_mib: start,
    end_mib: end,
    min_mib: Math.min(...values),
    max_mib: Math.max(...values),
    growth_mib: round1(end - start),
    settled_from_s: round1(settled[0]!.t_s - xs[0]!.t_s),
    settled_growth_mib: round1(settledGrowth),
    settled_slope_mib_per_min: round1(slopeOf(settled)),
    noise_band_mib: round1(noise),
    growth_beyond_noise: settledGrowth > noise,
  };
}
