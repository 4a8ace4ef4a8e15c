import { readFileSync } from 'node:fs';
import type pg from 'pg';

/**
 * CPU time spent per series by the parties of a call: the service process, the Postgres backends
 * serving its pool, this (client) process and, when given, the embedder's process. Unlike wall-clock latency this barely moves
 * when other work shares the machine, so it shows where the time goes even on a busy host.
 * Linux only (/proc); elsewhere the figures are null.
 */

const TICK_MS = 10; // USER_HZ is 100 on every Linux we run on (getconf CLK_TCK)

/** utime + stime of a process, in ms, or undefined when it cannot be read. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After "pid (comm) ", field 3 (state) is index 0; utime and stime are fields 14 and 15.
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) * TICK_MS : undefined;
  } catch {
    return undefined;
  }
}

/** Machine-wide busy and total CPU time so far (ms, all CPUs), from the first line of /proc/stat. */
export function machineCpuMs(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const v = line.trim().split(/\s+/).slice(1, 9).map(Number); // user nice system idle iowait irq softirq steal
    const total = v.reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    return { busy: (total - idle) * TICK_MS, total: total * TICK_MS };
  } catch {
    return undefined;
  }
}

export interface CpuPerCall {
  /** ms of CPU per call; null when not measurable here. */
  service: number | null;
  postgres: number | null;
  client: number;
  /** The embedder's process (only when its pid was given). */
  embedder?: number | null;
  /**
   * Share of the machine's CPU capacity used during the series by everything else (other processes,
   * kernel work not charged to ours): a high figure means the latencies were taken on a busy host.
   */
  background_pct: number | null;
}

export class CpuMeter {
  #service0: number | undefined;
  #backends0 = new Map<number, number | undefined>();
  #client0: NodeJS.CpuUsage | undefined;
  #embedder0: number | undefined;
  #machine0: { busy: number; total: number } | undefined;

  /** `monitor` is a connection to the service's database (not one of the service's own). */
  constructor(
    private readonly servicePid: number,
    private readonly monitor: pg.Client | undefined,
    private readonly applicationName = 'devstream-hub',
    private readonly embedderPid?: number,
  ) {}

  async #backendPids(): Promise<number[]> {
    if (!this.monitor) return [];
    const { rows } = await this.monitor.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = current_database() and application_name = $1 and pid <> pg_backend_pid()',
      [this.applicationName],
    );
    return rows.map((r) => r.pid);
  }

  async start(): Promise<void> {
    this.#backends0 = new Map((await this.#backendPids()).map((pid) => [pid, processCpuMs(pid)]));
    this.#service0 = processCpuMs(this.servicePid);
    this.#client0 = process.cpuUsage();
    this.#embedder0 = this.embedderPid === undefined ? undefined : processCpuMs(this.embedderPid);
    this.#machine0 = machineCpuMs();
  }

  /** CPU per call since start(), over `calls` calls. */
  async stop(calls: number): Promise<CpuPerCall> {
    const client = process.cpuUsage(this.#client0);
    const machine1 = machineCpuMs();
    const service1 = processCpuMs(this.servicePid);
    const embedder1 = this.embedderPid === undefined ? undefined : processCpuMs(this.embedderPid);
    let postgres: number | null = null;
    if (this.monitor) {
      postgres = 0;
      for (const pid of await this.#backendPids()) {
        const now = processCpuMs(pid);
        if (now === undefined) continue;
        // A backend opened during the series counts whole (its start-up included).
        postgres += now - (this.#backends0.get(pid) ?? 0);
      }
    }
    const serviceMs = service1 !== undefined && this.#service0 !== undefined ? service1 - this.#service0 : undefined;
    const clientMs = (client.user + client.system) / 1000;
    const embedderMs =
      embedder1 !== undefined && this.#embedder0 !== undefined ? embedder1 - this.#embedder0 : undefined;
    let background: number | null = null;
    if (machine1 && this.#machine0 && serviceMs !== undefined && machine1.total > this.#machine0.total) {
      const busy = machine1.busy - this.#machine0.busy;
      const ours = serviceMs + (postgres ?? 0) + clientMs + (embedderMs ?? 0);
      background = Math.max(0, Math.round(((busy - ours) / (machine1.total - this.#machine0.total)) * 1000) / 10);
    }
    const per = (x: number | null | undefined) =>
      x === null || x === undefined ? null : Math.round((x / calls) * 1000) / 1000;
    return {
      service: per(serviceMs),
      postgres: per(postgres),
      client: per(clientMs)!,
      ...(this.embedderPid === undefined ? {} : { embedder: per(embedderMs) }),
      background_pct: background,
    };
  }
}
