/**
 * The results of `npm run bench:devstream`: the per-backend record, the targets checked against
 * DevStream's recorded runs, and the Markdown report (bench/results/devstream-workload*.md).
 */
import {
  OPS,
  okOpsPerSecond,
  type DevstreamRuns,
  type HarnessResult,
  type OpKey,
  type OpSummary,
} from './devstream-harness.js';
import type { CpuPerCall } from './cpu.js';
import type { PingResult, RestOpResult, SearchPairResult } from './devstream-probes.js';

export type Backend = 'postgres' | 'pglite';

export interface BackendResult {
  backend: Backend;
  /** Where the data lived (no credentials). */
  location: string;
  database_server: string | null;
  harness_exit_code: number;
  /** Why the run counts as failed (harness failure, errors in a series or in seeding), if it does. */
  failures: string[];
  harness:
    | (Pick<
        HarnessResult,
        | 'summary_ms'
        | 'seeding'
        | 'sequential'
        | 'concurrent'
        | 'snapshots'
        | 'final_server_process'
        | 'protocol_noise'
        | 'embedder'
        | 'failure'
      > & { meta: HarnessResult['meta'] })
    | null;
  breakdown: {
    ping: PingResult | null;
    rest: RestOpResult[];
    /** pg_stat_statements: null on PGlite; else available, or why not. */
    pg_stat_statements: { available: true } | { available: false; reason: string } | null;
    /** search_memory over MCP with its statements' time on the same calls (Postgres with pg_stat_statements). */
    search_pair?: SearchPairResult | null;
  } | null;
  /** Postgres: pg_database_size at the end; PGlite: du of the data directory. */
  data_size_bytes: number | null;
  /** Lines the service printed (LOG_LEVEL=warn: warnings and errors), the first 20, and how many in all. */
  service_lines: { count: number; first: string[] };
}

export interface Target {
  backend: Backend;
  what: string;
  /** null: could not be checked in this run (the detail says why). */
  pass: boolean | null;
  detail: string;
}

export interface Report {
  benchmark: string;
  date: string;
  mode: 'full' | 'quick';
  memories: number;
  git: { commit: string | null; dirty: boolean | null };
  machine: Record<string, unknown>;
  harness: {
    source: string;
    cache: string;
    client_sdk: string | null;
    ops: readonly string[];
    probe_sizes: { warmup: number; iters: number };
  };
  devstream: DevstreamRuns;
  backends: Partial<Record<Backend, BackendResult>>;
  targets: Target[];
  failed: boolean;
}

// ---------------------------------------------------------------------------------------------
// Targets

const seq = (r: BackendResult | undefined, op: OpKey): OpSummary | undefined => r?.harness?.summary_ms[op];
const restOf = (r: BackendResult | undefined, op: OpKey) => r?.breakdown?.rest.find((x) => x.op === op);

/** Checks this run's figures against the targets (they are for the full 10k run; a quick run is informational). */
export function checkTargets(devstream: DevstreamRuns, backends: Partial<Record<Backend, BackendResult>>): Target[] {
  const targets: Target[] = [];
  const ds = devstream.median;
  const pgr = backends.postgres;
  const lite = backends.pglite;
  const add = (backend: Backend, what: string, pass: boolean | null, detail: string) =>
    targets.push({ backend, what, pass, detail });
  const each = (
    backend: Backend,
    what: string,
    test: (op: OpKey) => { pass: boolean | null; text: string } | null,
  ): void => {
    const lines = OPS.map((op) => ({ op, r: test(op) }));
    const missing = lines.filter((l) => l.r === null || l.r.pass === null).map((l) => l.op);
    const failed = lines.filter((l) => l.r?.pass === false);
    const pass = failed.length > 0 ? false : missing.length > 0 ? null : true;
    const detail = lines.map((l) => `${l.op} ${l.r?.text ?? 'n/a'}${l.r?.pass === false ? ' ❌' : ''}`).join('; ');
    add(backend, what, pass, detail);
  };

  if (pgr) {
    each('postgres', "every op's seq p95 ≤ DevStream's", (op) => {
      const ours = seq(pgr, op)?.seq_p95;
      const theirs = ds[op]?.seq_p95;
      if (ours === undefined || theirs === undefined) return null;
      return { pass: ours <= theirs, text: `${f(ours)} ≤ ${f(theirs)}` };
    });
    const ping = pgr.breakdown?.ping?.latency_ms.p50;
    each(
      'postgres',
      "every op's seq p50 ≤ DevStream's (or ≤ ping p50 + 1 ms where DevStream's is below that)",
      (op) => {
        const ours = seq(pgr, op)?.seq_p50;
        const theirs = ds[op]?.seq_p50;
        if (ours === undefined || theirs === undefined) return null;
        if (ping === undefined)
          return { pass: ours <= theirs ? true : null, text: `${f(ours)} ≤ ${f(theirs)} (no ping)` };
        const floor = ping + 1;
        const bound = Math.max(theirs, floor);
        return { pass: ours <= bound, text: `${f(ours)} ≤ ${f(bound)}${bound > theirs ? ' (ping + 1)' : ''}` };
      },
    );
    each('postgres', "every op's c10 ops/s ≥ 2× DevStream's successful ops/s", (op) => {
      const ours = okOpsPerSecond(seq(pgr, op));
      const theirs = ds[op]?.conc_ok_ops_s;
      if (ours === undefined || theirs === undefined) return null;
      return { pass: ours >= 2 * theirs, text: `${f(ours)} ≥ ${f(2 * theirs)}` };
    });
    const search = seq(pgr, 'search_memory');
    add(
      'postgres',
      'search_memory seq p50 ≤ 10 ms and p95 ≤ 20 ms',
      search ? search.seq_p50 <= 10 && search.seq_p95 <= 20 : null,
      search ? `p50 ${f(search.seq_p50)} ms, p95 ${f(search.seq_p95)} ms` : 'no search_memory figures',
    );
    const pair = pgr.breakdown?.search_pair;
    add(
      'postgres',
      'search_memory: the service ≤ 1.3× its own SQL (mean over MCP ÷ its statements a call, the same calls)',
      pair ? pair.ratio <= 1.3 : null,
      pair
        ? `${f(pair.mcp_ms.mean)} ÷ ${f(pair.own_sql_ms_per_call)} = ${pair.ratio.toFixed(2)}× (${pair.n} searches)` +
            (pair.ratio_with_planning == null
              ? ''
              : `; with their planning (${f(pair.own_plan_ms_per_call ?? undefined)} ms a call): ${pair.ratio_with_planning.toFixed(2)}×`)
        : `not measured (${pgr.breakdown?.pg_stat_statements && !pgr.breakdown.pg_stat_statements.available ? 'pg_stat_statements unavailable' : 'no figures'})`,
    );
  }
  if (lite) {
    each('pglite', "no op's seq p95 above 3× its Postgres p95 (same run)", (op) => {
      const ours = seq(lite, op)?.seq_p95;
      const postgres = seq(pgr, op)?.seq_p95;
      if (ours === undefined) return null;
      if (postgres === undefined) return { pass: null, text: `${f(ours)} (no Postgres run)` };
      return { pass: ours <= 3 * postgres, text: `${f(ours)} ≤ ${f(3 * postgres)}` };
    });
    each('pglite', "every op's c10 ops/s ≥ DevStream's successful ops/s", (op) => {
      const ours = okOpsPerSecond(seq(lite, op));
      const theirs = ds[op]?.conc_ok_ops_s;
      if (ours === undefined || theirs === undefined) return null;
      return { pass: ours >= theirs, text: `${f(ours)} ≥ ${f(theirs)}` };
    });
  }
  return targets;
}

// ---------------------------------------------------------------------------------------------
// Markdown

/** 3 significant figures or so, as the side-by-side tables print them. */
export function f(x: number | null | undefined): string {
  if (x === null || x === undefined || Number.isNaN(x)) return '–';
  const a = Math.abs(x);
  return a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(2);
}

const LABELS: Record<OpKey, string> = {
  list_plans: 'list_plans',
  list_tasks_nofilter: 'list_tasks (no filter)',
  list_tasks_status_priority: 'list_tasks status+priority',
  search_memory: 'search_memory (limit 10)',
  create_task: 'create_task',
  update_task: 'update_task',
  store_memory: 'store_memory',
};

const cell = (s: OpSummary | Record<string, number> | undefined, okKey: boolean) => {
  if (!s) return '–';
  const ops = okKey ? (s as Record<string, number>).conc_ok_ops_s : okOpsPerSecond(s as OpSummary);
  const errors = (s as OpSummary).seq_errors || (s as OpSummary).conc_errors;
  return `${f(s.seq_p50)} / ${f(s.seq_p95)} · ${f(ops)}${!okKey && errors ? ` (errors ${(s as OpSummary).seq_errors}·${(s as OpSummary).conc_errors ?? 0})` : ''}`;
};

const mib = (bytes: number | null | undefined) => (bytes == null ? '–' : f(bytes / 2 ** 20));

export function formatMarkdown(report: Report): string {
  const { devstream, backends } = report;
  const order = (['postgres', 'pglite'] as const).filter((b) => backends[b]);
  const name = (b: Backend) => (b === 'postgres' ? 'Postgres' : 'PGlite');
  const m = report.machine;
  const anyMeta = order.map((b) => backends[b]?.harness?.meta).find(Boolean);
  const lines: string[] = [
    `# DevStream's workload: DevStream vs devstream-hub${report.mode === 'quick' ? ' (quick run)' : ''}`,
    '',
    `- Date: ${report.date}; commit ${report.git.commit ?? 'unknown'}${report.git.dirty ? ' (src/ differs from it)' : ''}`,
    `- Machine: ${m.cpus} CPUs (${m.cpu_model}), ${m.total_memory_gib} GiB RAM, Node ${m.node}; CPU busy with other work just before: ${m.cpu_busy_pct_before ?? '?'}%; load average before / after: ${(m.load_average_before as number[]).join(' ')} / ${(m.load_average_after as number[]).join(' ')}${m.cpu_calibration_ms_before === undefined ? '' : `; CPU calibration before / after: ${String(m.cpu_calibration_ms_before)} / ${String(m.cpu_calibration_ms_after)} ms (a fixed loop, lower is faster: the machine's speed drifts)`}`,
    `- Harness: ${report.harness.source} (bench-http.mjs, MCP SDK ${report.harness.client_sdk ?? '?'} client, Streamable HTTP, 2025-era session), ops ${report.harness.ops.join(', ')}`,
    anyMeta
      ? `- Workload: seed ${anyMeta.workload.options.seed}, ${anyMeta.workload.counts.plans} plans × ${anyMeta.workload.options.phasesPerPlan} phases, ${anyMeta.workload.counts.tasks} tasks, ${anyMeta.workload.counts.memories} memories (fingerprint ${anyMeta.workload.fingerprint.slice(0, 16)}…); ${String(anyMeta.params.warmup)} warm-up + ${String(anyMeta.params.iters)} measured calls per op, sequential (seq) then ${String(anyMeta.params.concurrency)} in flight (c10); embedder: the harness's fake-ollama.mjs`
      : '- Workload: no harness result',
    `- DevStream (SQLite, stdio): median of its ${devstream.files.length} recorded runs at 10,000 memories (${devstream.files.join(', ')}; ${devstream.meta.map((x) => x.started_at?.slice(0, 16) ?? '?').join(', ')})`,
    `- Ours: the service as a child process on a fresh store per backend (${order.map((b) => `${name(b)}: ${backends[b]!.location}${backends[b]!.database_server ? `, ${backends[b]!.database_server}` : ''}`).join('; ')})`,
    '',
  ];
  if (report.mode === 'quick')
    lines.push(
      '**Quick run**: a small store and 30 calls per op; the DevStream figures are from its full 10k runs. The targets below are for the full run and shown for information only.',
      '',
    );
  else if (report.memories !== 10_000)
    lines.push(
      `**${report.memories.toLocaleString('en-US')} memories**: DevStream's figures are at 10,000; the comparison shows how flat our figures stay as the store grows.`,
      '',
    );

  lines.push(
    '## Per op',
    '',
    'seq p50 / p95 in ms (one call at a time) · c10 successful ops/s (10 calls in flight). Ratios > 1: ours is faster.',
    '',
    `| op | DevStream seq p50 / p95 · c10 ok ops/s | ${order.map((b) => `ours ${name(b)} seq p50 / p95 · c10 ops/s`).join(' | ')} | ratio seq p50 DevStream ÷ ours (${order.map(name).join(' · ')}) | ratio c10 ops/s ours ÷ DevStream (${order.map(name).join(' · ')}) |`,
    `|---|---|${order.map(() => '---|').join('')}---|---|`,
  );
  for (const op of OPS) {
    const d = devstream.median[op];
    const ratioP50 = order
      .map((b) => {
        const o = seq(backends[b], op)?.seq_p50;
        return d && o ? (d.seq_p50! / o).toFixed(2) : '–';
      })
      .join(' · ');
    const ratioOps = order
      .map((b) => {
        const o = okOpsPerSecond(seq(backends[b], op));
        return d?.conc_ok_ops_s && o ? (o / d.conc_ok_ops_s).toFixed(2) : '–';
      })
      .join(' · ');
    lines.push(
      `| ${LABELS[op]} | ${cell(d, true)} | ${order.map((b) => cell(seq(backends[b], op), false)).join(' | ')} | ${ratioP50} | ${ratioOps} |`,
    );
  }
  lines.push('');
  const dsUpdate = devstream.median.update_task;
  if (dsUpdate?.conc_errors)
    lines.push(
      `DevStream's update_task c10 series failed ${dsUpdate.conc_errors} of 200 calls (median); its successful throughput is the comparison (all calls: ${f(dsUpdate.conc_ops_s)} ops/s).`,
      '',
    );

  lines.push(
    '## Seeding and size',
    '',
    '| system | seed tasks ops/s | seed memories ops/s | memories p50 first → last decile (ms) | seeding errors | server RSS after seeding / peak MB | data size MB (end) |',
    '|---|---|---|---|---|---|---|',
  );
  for (const b of order) {
    const r = backends[b]!;
    const s = r.harness?.seeding;
    const deciles = (s?.memories?.p50_by_decile_ms as number[] | undefined) ?? [];
    const after = (r.harness?.snapshots?.after_seeding as any)?.server_process;
    const final = r.harness?.final_server_process as any;
    lines.push(
      `| ours ${name(b)} | ${f(s?.tasks?.throughput_ops_s as number)} | ${f(s?.memories?.throughput_ops_s as number)} | ${deciles.length ? `${f(deciles[0])} → ${f(deciles.at(-1))}` : '–'} | ${s ? `${s.tasks?.errors ?? '?'} · ${s.memories?.errors ?? '?'}` : '–'} | ${f(after?.rss_mb)} / ${f(final?.rss_peak_mb)} | ${mib(r.data_size_bytes)} |`,
    );
  }
  lines.push('');

  lines.push(
    '## Where the time goes',
    '',
    'After the harness, on the same seeded service, one call at a time: MCP `ping` over the same SDK 1.32 session transport (the floor every MCP call pays), ' +
      "the same ops over REST (/api/v1) with the harness's argument generators, the service's `Server-Timing` `op` (validation + SQL + mapping inside the service) and `embed`, " +
      'and on Postgres pg_stat_statements during each REST series (execution time of every statement the service ran, per call of the op; their planning apart, when pg_stat_statements.track_planning could be turned on for the scratch database). ' +
      'MCP − op ≈ HTTP + MCP SDK (both sides: the client validates structured results too) + session + auth; op − embed − SQL ≈ the service’s own code and the driver round trips ' +
      '(all p50s of separate series, measured at different moments: a small negative difference is noise). ' +
      '"Occasional" SQL: statements run less than once per 4 calls, i.e. background work the series set off (the embedding worker storing vectors, keyword statistics); ' +
      'it counts in SQL ms/call (and so in the search target) but not in op − embed − SQL, which takes the request’s own statements.',
    '',
  );
  for (const b of order) {
    const r = backends[b]!;
    const bd = r.breakdown;
    if (!bd) {
      lines.push(`${name(b)}: no breakdown (the harness run failed).`, '');
      continue;
    }
    const ping = bd.ping?.latency_ms;
    const pss = bd.pg_stat_statements;
    lines.push(
      `### ${name(b)}`,
      '',
      `MCP ping p50 / p95: ${f(ping?.p50)} / ${f(ping?.p95)} ms (${bd.ping?.latency_ms.n ?? 0} calls, protocol ${bd.ping?.protocol_version ?? '?'}${bd.ping?.session ? ', session' : ''}).` +
        (pss === null
          ? ' SQL time: not measured on PGlite (no pg_stat_statements).'
          : pss.available
            ? ''
            : ` SQL time: pg_stat_statements is not available (${pss.reason}).`),
      '',
      '| op | MCP seq p50 | ping p50 | REST p50 | Server-Timing op p50 | embed p50 | SQL ms/call (of which occasional) | planning ms/call | MCP − op | op − embed − SQL | REST errors |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const op of OPS) {
      const mcp = seq(r, op)?.seq_p50;
      const rest = restOf(r, op);
      const opMs = rest?.server_op_ms?.p50;
      const sql = rest?.sql?.sql_ms_per_call;
      const occasional = rest?.sql?.occasional_ms_per_call;
      lines.push(
        `| ${LABELS[op]} | ${f(mcp)} | ${f(ping?.p50)} | ${f(rest?.client_ms.p50)} | ${f(opMs)} | ${f(rest?.embed_ms?.p50)} | ${f(sql)}${occasional ? ` (${f(occasional)})` : ''} | ${f(rest?.sql?.plan_ms_per_call ?? undefined)} | ${mcp !== undefined && opMs !== undefined ? f(mcp - opMs) : '–'} | ${opMs !== undefined && sql !== undefined ? f(opMs - (rest?.embed_ms?.p50 ?? 0) - (sql - (occasional ?? 0))) : '–'} | ${rest ? rest.errors : '–'} |`,
      );
    }
    lines.push('');
    const pair = bd.search_pair;
    if (pair)
      lines.push(
        `search_memory, the service against its own SQL on the same calls (${pair.n} searches over MCP after the REST series, once the background work it set off was done; pg_stat_statements around them): ` +
          `mean ${f(pair.mcp_ms.mean)} ms (p50 ${f(pair.mcp_ms.p50)}, p95 ${f(pair.mcp_ms.p95)}) ÷ its statements' execution ${f(pair.own_sql_ms_per_call)} ms a call = ${pair.ratio.toFixed(2)}×` +
          (pair.ratio_with_planning == null
            ? ' (their planning not tracked)'
            : `; ÷ their execution and planning (${f(pair.own_plan_ms_per_call ?? undefined)} ms a call) = ${pair.ratio_with_planning.toFixed(2)}×`) +
          ` (occasional statements, left out: ${f(pair.sql.occasional_ms_per_call)} ms a call). The search's keyword and vector statements run side by side: their execution times add up to more than the wall time they take.`,
        '',
      );
    const search = seq(r, 'search_memory')?.seq_p50;
    const searchSql = restOf(r, 'search_memory')?.sql?.sql_ms_per_call;
    if (search !== undefined && searchSql)
      lines.push(
        `Unpaired, as reported before 2026-12-05: the harness's MCP seq p50 ÷ the REST series' SQL ms per search = ${f(search)} ÷ ${f(searchSql)} = ${(search / searchSql).toFixed(2)}× (a p50 against a mean, of other calls).`,
        '',
      );
    const withSql = bd.rest.filter((x) => x.sql && x.sql.statements.length);
    if (withSql.length) {
      lines.push('Statements per op (pg_stat_statements; the 4 with the most time; calls per op call, mean ms):', '');
      for (const x of withSql) {
        const top = x.sql!.statements.slice(0, 4);
        lines.push(
          `- ${LABELS[x.op]}: ${top.map((s) => `\`${s.query.replace(/`/g, "'")}\` ×${s.calls_per_op}, ${f(s.mean_exec_ms)} ms`).join('; ')}`,
        );
      }
      lines.push('');
    }
    lines.push(...cpuLines(bd, Number(m.cpus), b));
  }

  const failures = order.flatMap((b) => backends[b]!.failures.map((x) => `${name(b)}: ${x}`));
  const warnings = order.filter((b) => backends[b]!.service_lines.count > 0);
  if (failures.length || warnings.length) {
    lines.push('## Problems seen', '');
    for (const x of failures) lines.push(`- ${x}`);
    for (const b of warnings) {
      const s = backends[b]!.service_lines;
      lines.push(
        `- ${name(b)}: the service printed ${s.count} warning/error line(s); first: \`${s.first[0]?.slice(0, 300).replace(/`/g, "'")}\``,
      );
    }
    lines.push('');
  }

  lines.push(`## Targets${report.mode === 'quick' ? ' (for the full run; informational here)' : ''}`, '');
  for (const t of report.targets) {
    const mark = t.pass === null ? '⚪' : t.pass ? '✅' : '❌';
    lines.push(`- ${mark} ${name(t.backend)}: ${t.what} — ${t.detail}`);
  }
  if (!report.targets.length) lines.push('- none checked (no backend ran)');
  lines.push('');
  return lines.join('\n');
}

/**
 * The CPU table of a backend's breakdown: per series, what each process spent a call. Their sum over
 * the machine's CPUs is the least wall time a call can take when all of them run at once (more when
 * they wait on each other): where it comes close to the p50, the machine, not a wait, sets the pace.
 */
function cpuLines(bd: NonNullable<BackendResult['breakdown']>, cpus: number, backend: Backend): string[] {
  const rows: Array<{ series: string; wall: number | undefined; cpu: CpuPerCall }> = [];
  if (bd.ping?.cpu_ms_per_call)
    rows.push({ series: 'MCP ping', wall: bd.ping.latency_ms.p50, cpu: bd.ping.cpu_ms_per_call });
  for (const r of bd.rest)
    if (r.cpu_ms_per_call) rows.push({ series: `REST ${LABELS[r.op]}`, wall: r.client_ms.p50, cpu: r.cpu_ms_per_call });
  const pair = bd.search_pair;
  if (pair?.cpu_ms_per_call)
    rows.push({ series: 'MCP search_memory (the paired series)', wall: pair.mcp_ms.p50, cpu: pair.cpu_ms_per_call });
  if (rows.length === 0) return [];
  const lines = [
    `CPU a call, by process, over each series above (ms; the client is the benchmark's own process; ${
      backend === 'postgres' ? "Postgres: the backends of the service's pool" : 'PGlite runs inside the service'
    }; the embedder: the fake Ollama). With ${cpus} CPUs a call takes at least the sum ÷ ${cpus} of wall time, when every part runs at once; "other work": the share of the machine busy with anything else meanwhile.`,
    '',
    `| series | wall p50 | client | service | Postgres | embedder | sum | sum ÷ ${cpus} | other work |`,
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const { series, wall, cpu } of rows) {
    const parts = [cpu.client, cpu.service, cpu.postgres, cpu.embedder ?? null];
    const sum = parts.reduce<number>((a, x) => a + (x ?? 0), 0);
    const cell = (x: number | null | undefined) => (x === null || x === undefined ? '–' : f(x));
    lines.push(
      `| ${series} | ${f(wall)} | ${parts.map(cell).join(' | ')} | ${f(sum)} | ${f(sum / cpus)} | ${cpu.background_pct === null ? '?' : `${cpu.background_pct.toFixed(0)} %`} |`,
    );
  }
  lines.push('');
  return lines;
}
