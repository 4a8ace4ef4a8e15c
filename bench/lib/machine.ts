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
