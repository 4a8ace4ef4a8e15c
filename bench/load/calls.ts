import { round1, rounded, summarize, type Summary } from '../lib/stats.js';
import { TOOLS, type ToolName } from './mix.js';

/** One tool call of a phase. */
export interface CallEvent {
  tool: ToolName;
  /** ms since the phase began. */
  start: number;
  end: number;
  ok: boolean;
  code?: string;
}

export class PhaseRecorder {
  readonly t0 = performance.now();
  readonly events: CallEvent[] = [];
  readonly examples = new Map<string, string>();
  now(): number {
    return performance.now() - this.t0;
  }
}

/** Calls that started in [from, to), rates per second over `windowMs`. */
export function summarizeCalls(rec: PhaseRecorder, windowMs: number, from = 0, to = Infinity) {
  const elapsedMs = windowMs;
  const events = rec.events.filter((e) => e.start >= from && e.start < to);
  const perTool: Record<
    string,
    { calls: number; ok: number; errors: number; per_s: number; latency_ms: Summary | null }
  > = {};
  for (const tool of TOOLS) {
    const mine = events.filter((e) => e.tool === tool);
    const ok = mine.filter((e) => e.ok).map((e) => e.end - e.start);
    perTool[tool] = {
      calls: mine.length,
      ok: ok.length,
      errors: mine.length - ok.length,
      per_s: round1(mine.length / (elapsedMs / 1000)),
      latency_ms: ok.length ? rounded(summarize(ok)) : null,
    };
  }
  const okAll = events.filter((e) => e.ok).map((e) => e.end - e.start);
  const errorsByCode: Record<string, number> = {};
  for (const e of events) if (!e.ok) errorsByCode[e.code!] = (errorsByCode[e.code!] ?? 0) + 1;
  return {
    calls: events.length,
    ok: okAll.length,
    errors: events.length - okAll.length,
    errors_by_code: errorsByCode,
    throughput_per_s: round1(events.length / (elapsedMs / 1000)),
    ok_per_s: round1(okAll.length / (elapsedMs / 1000)),
    latency_ms: okAll.length ? rounded(summarize(okAll)) : null,
    per_tool: perTool,
  };
}

export function timeline(rec: PhaseRecorder, seconds: number): Array<{ s: number; ok: number; errors: number }> {
  const out = Array.from({ length: Math.ceil(seconds) + 1 }, (_, s) => ({ s, ok: 0, errors: 0 }));
  for (const e of rec.events) {
    const bucket = out[Math.min(out.length - 1, Math.floor(e.end / 1000))]!;
    if (e.ok) bucket.ok++;
    else bucket.errors++;
  }
  return out;
}
