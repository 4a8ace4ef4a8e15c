import pg from 'pg';
import { machineCpuMs, processCpuMs } from '../lib/cpu.js';

/** The pids of the service's Postgres backends now (empty while Postgres is down). */
export async function backendPids(dbUrl: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: dbUrl, connectionTimeoutMillis: 1_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ pid: number }>(
      "select pid from pg_stat_activity where application_name = 'devstream-hub' and datname = current_database()",
    );
    return rows.map((r) => r.pid);
  } catch {
    return [];
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * CPU used over a phase by the service, its Postgres backends (those alive at the end; one opened
 * during the phase counts whole), this process (the load generator), and the whole machine.
 */
export async function cpuMeter(pid: number, dbUrl: string) {
  const b0 = new Map((await backendPids(dbUrl)).map((p) => [p, processCpuMs(p)]));
  const s0 = processCpuMs(pid);
  const c0 = process.cpuUsage();
  const m0 = machineCpuMs();
  const t0 = performance.now();
  return async (calls: number) => {
    const wall = performance.now() - t0;
    const s1 = processCpuMs(pid);
    const c = process.cpuUsage(c0);
    const m1 = machineCpuMs();
    let pgMs = 0;
    for (const p of await backendPids(dbUrl)) pgMs += (processCpuMs(p) ?? 0) - (b0.get(p) ?? 0);
    const serviceMs = s1 !== undefined && s0 !== undefined ? s1 - s0 : undefined;
    const clientMs = (c.user + c.system) / 1000;
    const pct = (ms: number | undefined) => (ms === undefined ? null : Math.round((ms / wall) * 1000) / 10);
    const per = (ms: number | undefined) =>
      ms === undefined || calls === 0 ? null : Math.round((ms / calls) * 100) / 100;
    return {
      /** % of one CPU. */
      service_cpu_pct: pct(serviceMs),
      postgres_cpu_pct: pct(pgMs),
      client_cpu_pct: pct(clientMs),
      /** % of the whole machine (all CPUs) busy, anything included. */
      machine_busy_pct:
        m0 && m1 && m1.total > m0.total ? Math.round(((m1.busy - m0.busy) / (m1.total - m0.total)) * 1000) / 10 : null,
      cpu_ms_per_call: { service: per(serviceMs), postgres: per(pgMs), client: per(clientMs) },
    };
  };
}
