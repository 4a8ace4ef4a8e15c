import os from 'node:os';

/**
 * The `machine` block of a benchmark's results: CPUs, CPU model, RAM in whole GiB, Node version.
 * (load, startup and tasks record more: platform, load averages, RAM to 0.1 GiB.)
 */
export function machine(): { cpus: number; cpu_model: string; total_memory_gib: number; node: string } {
  return {
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model ?? 'unknown',
    total_memory_gib: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  };
}

/**
 * How fast this machine's CPU runs right now, in ms (lower is faster): the best of three runs of
 * a fixed loop of integer arithmetic (~100 ms each on the development VM). Its CPU speed drifts
 * through the day (the same loop took 325 and 382 ms twenty minutes apart, idle both times), and
 * every figure of a run drifts with it: recorded before and after a benchmark, it tells a slow run
 * from a slow change.
 */
export function cpuCalibrationMs(): number {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 3; run++) {
    const start = performance.now();
    let x = 0;
    for (let i = 0; i < 60_000_000; i++) x = (x + (i % 7)) | 0;
    const ms = performance.now() - start;
    if (x === -1) throw new Error('unreachable'); // keeps the loop from being optimized away
    best = Math.min(best, ms);
  }
  return Math.round(best * 10) / 10;
}
