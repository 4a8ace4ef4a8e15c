import type { Summary } from '../lib/stats.js';

/** The results file's Markdown twin (bench/results/load*.md), from the results object. */
export function markdown(r: any): string {
  const f = (x: number | null | undefined, d = 1) =>
    x === null || x === undefined || Number.isNaN(x) ? '—' : x.toFixed(d);
  const lat = (s: Summary | null) => (s ? `${f(s.p50)} / ${f(s.p95)} / ${f(s.p99)}` : '—');
  const A = r.phase_a;
  const C = r.phase_c;
  const o = C.outage;
  const v = r.verification;
  const lines = [
    `# Load benchmark (${r.date.slice(0, 10)}, Postgres ${r.database_server.split(' ')[1] ?? ''})`,
    '',
    `${r.machine.cpus} vCPU (${r.machine.cpu_model}), ${r.machine.total_memory_gib} GiB, Node ${r.machine.node}; git ${r.git.commit}${r.git.dirty ? ' (src/ modified)' : ''}. ` +
      `Service, Postgres and the load generator share the machine. Data: ${r.setup.seeded.tasks} seeded tasks, ${r.setup.seeded.memories} memories, ` +
      `a ${r.setup.seeded.graph_nodes}-node code graph; fake Ollama (hybrid search).`,
    '',
    `## A. Steady MCP load: ${A.sessions} sessions, ${A.seconds} s`,
    '',
    `${A.calls} calls, **${A.throughput_per_s} calls/s**, ${A.errors} errors${A.errors ? ` ${JSON.stringify(A.errors_by_code)}` : ''}; all tools p50 / p95 / p99 **${lat(A.latency_ms)} ms** (client side, SDK Client).`,
    `CPU: service ${f(A.cpu.service_cpu_pct, 0)} % of a core, its Postgres backends ${f(A.cpu.postgres_cpu_pct, 0)} %, load generator ${f(A.cpu.client_cpu_pct, 0)} %; ` +
      `machine ${f(A.cpu.machine_busy_pct, 0)} % busy (all ${r.machine.cpus} CPUs). CPU ms per call: service ${f(A.cpu.cpu_ms_per_call.service, 2)}, Postgres ${f(A.cpu.cpu_ms_per_call.postgres, 2)}, ` +
      `load generator ${f(A.cpu.cpu_ms_per_call.client, 2)}. Load generator event-loop delay p99 ${A.client_event_loop_delay.p99_ms} ms (inflates client-side latencies by up to that).`,
    '',
    '| tool | calls | calls/s | errors | p50 / p95 / p99 ms |',
    '| --- | --- | --- | --- | --- |',
    ...Object.entries(A.per_tool as Record<string, any>).map(
      ([t, s]) => `| ${t} | ${s.calls} | ${s.per_s} | ${s.errors} | ${lat(s.latency_ms)} |`,
    ),
    '',
    `Service RSS (VmRSS every 5 s): ${r.rss_mib.baseline_after_start} MiB after start-up and seeding; phase A ${A.rss.start_mib} → ${A.rss.end_mib} MiB (min ${A.rss.min_mib}, max ${A.rss.max_mib}); ` +
      `from ${A.rss.settled_from_s} s on (after warming up) ${A.rss.settled_growth_mib >= 0 ? '+' : ''}${A.rss.settled_growth_mib} MiB, slope ${A.rss.settled_slope_mib_per_min} MiB/min, noise band ${A.rss.noise_band_mib} MiB: ` +
      `${A.rss.growth_beyond_noise ? '**grew beyond noise**' : 'no growth beyond noise'}. ` +
      `After B ${r.rss_mib.phase_b_end}, after C ${r.rss_mib.phase_c_end ?? '— (process gone)'} MiB; peak (VmHWM) ${r.rss_mib.peak_hwm} MiB. ` +
      `V8 heap in use over phase A (MiB, every 5 s): ${(A.heap_mib as Array<[number, number | null]>).map(([, h]) => h ?? '—').join(' ')}.`,
    '',
    `## B. REST load (autocannon, ${Object.values(r.phase_b.routes as Record<string, any>)[0]?.connections} connections)`,
    '',
    '| route | s | requests | req/s | p50 / p95 / p99 ms | non-2xx | errors |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...Object.values(r.phase_b.routes as Record<string, any>).map(
      (b) =>
        `| ${b.route} | ${b.seconds} | ${b.requests} | ${b.req_per_s} | ${lat(b.latency_ms)} | ${b.non2xx} | ${b.errors} |`,
    ),
    '',
    `CPU: service ${f(r.phase_b.cpu.service_cpu_pct, 0)} % of a core, Postgres ${f(r.phase_b.cpu.postgres_cpu_pct, 0)} %, autocannon ${f(r.phase_b.cpu.client_cpu_pct, 0)} %; machine ${f(r.phase_b.cpu.machine_busy_pct, 0)} % busy.`,
    '',
    `## C. Postgres restart under MCP load: ${C.sessions} sessions, ${C.seconds} s, \`pg_ctl stop -m ${o.mode}\` at ${f(o.marks_ms.stop_begin / 1000)} s, down ${o.outage_held_s} s`,
    '',
    `Postgres stopped in ${o.marks_ms.stopped - o.marks_ms.stop_begin} ms, accepting connections again at ${f(o.marks_ms.up / 1000)} s (down ${o.postgres_down_ms} ms in all).`,
    '',
    `- calls: ${C.calls} (${C.throughput_per_s}/s), errors **${o.errors_total}**: ${JSON.stringify(o.errors_by_code)}; by tool ${JSON.stringify(o.errors_by_tool)}`,
    `- errors before the stop ${o.errors_before_stop}, while down ${o.errors_while_down}, after Postgres was back ${o.errors_after_up} (${o.calls_started_after_up_that_failed} of them started after it was back)`,
    `- failed calls took p50 ${f(o.error_latency_ms?.p50)} ms, max ${f(o.error_latency_ms?.max)} ms (how fast the service answers while the database is gone)`,
    `- **recovery** (first error → first success after Postgres is back): ${o.recovery_ms ?? '—'} ms; Postgres back → first success ${o.up_to_first_success_ms ?? '—'} ms; Postgres back → last error ${o.up_to_last_error_ms} ms`,
    `- REST probe (GET /api/v1/tasks?limit=1 every ~250 ms) answers: ${JSON.stringify(o.rest_probe_answers)}`,
    `- /readyz: ${o.readyz_not_ready_probes} not-ready probes (statuses ${o.readyz_statuses_seen.join(', ')}); ready again ${o.readyz_ready_again_after_up_ms ?? '—'} ms after Postgres was back`,
    `- before the stop: p50 / p95 / p99 ${lat(C.before_stop.latency_ms)} ms at ${C.before_stop.throughput_per_s} calls/s; ` +
      (C.after_recovery
        ? `after recovery: ${lat(C.after_recovery.latency_ms)} ms at ${C.after_recovery.throughput_per_s} calls/s`
        : 'no recovered stretch to measure'),
    `- the service ${C.service_alive_after ? 'stayed up' : `**exited** (noticed at ${f(C.service_died_at_ms / 1000)} s)`}; /readyz at the end: ${r.readyz_at_end}`,
    '',
    'Calls per second (ok / errors), by when they ended:',
    '',
    '```',
    ...chunk(C.timeline as Array<{ s: number; ok: number; errors: number }>, 10).map((row) =>
      row.map((b) => `${String(b.s).padStart(2)}s ${String(b.ok).padStart(4)}/${String(b.errors).padEnd(3)}`).join(' '),
    ),
    '```',
  ];
  if (!C.service_alive_after && C.service_exit_output) {
    lines.push(
      '',
      'The service process exited; its last output:',
      '',
      '```',
      ...String(C.service_exit_output).split('\n').slice(0, 25),
      '```',
    );
  }
  if (Object.keys(o.error_examples).length) {
    lines.push('', 'One example per error code:', '');
    for (const [code, ex] of Object.entries(o.error_examples as Record<string, string>))
      lines.push(`- \`${code}\`: ${ex.replace(/\n/g, ' ').slice(0, 240)}`);
  }
  lines.push('', '## Acknowledged writes (phases warm-up, A and C)', '');
  if ('lost_writes' in v) {
    lines.push(
      `${v.acknowledged.tasks_created} tasks created (${JSON.stringify(v.acknowledged.tasks_created_by_phase)}) with their last acknowledged status, ` +
        `${v.acknowledged.memories} memories (${JSON.stringify(v.acknowledged.memories_by_phase)}; stored, and update notes) checked in the database: ` +
        `**${v.lost_writes} lost or changed**${v.lost_writes ? ` — ${[...v.lost_tasks, ...v.wrong_tasks, ...v.lost_memories, ...v.wrong_memories].slice(0, 5).join('; ')}` : ''}.`,
      `Acknowledgements contradicting an earlier one: ${v.ack_inconsistency_count}. Failed writes committed all the same (answer lost, write kept): ` +
        `${v.failed_creates_committed_anyway} of ${v.failed_creates} failed creates, ${v.failed_stores_committed_anyway} of ${v.failed_stores} failed stores; ` +
        `unacknowledged status updates that did apply: ${v.status_of_unacknowledged_update_applied}. Memories still without a vector 3 s later: ${v.memories_without_vector_yet}. ` +
        `REST spot checks: ${v.rest_spot_checks.ok}/${v.rest_spot_checks.of}.`,
    );
  } else lines.push(`Not verified: ${v.error}`);
  if (r.service_log.lines) {
    lines.push(
      '',
      `## Service log (LOG_LEVEL=warn): ${r.service_log.lines} lines ${JSON.stringify(r.service_log.by_phase)}`,
      '',
    );
    for (const m of r.service_log.distinct_messages.slice(0, 10))
      lines.push(`- ${m.count} × ${m.msg} (${m.phases.join(', ')})`);
  }
  return lines.join('\n') + '\n';
}

export function chunk<T>(xs: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}
