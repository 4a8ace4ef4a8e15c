/**
 * Task/plan latency benchmark: `npm run bench:tasks` (not part of `npm test`).
 *
 * Seeds a scratch database (100 projects × 5 phases × 20 tasks), starts the real service as a child
 * process (`node --import tsx src/main.ts serve`, its own event loop), then measures, one request at
 * a time, each case over MCP (SDK Client, Streamable HTTP) and REST (fetch). Prints a table and
 * writes bench/results/tasks.json and tasks.md.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:54329/postgres npm run bench:tasks
 *   npm run bench:tasks -- --pglite              embedded PGlite, for comparison (no targets)
 *   npm run bench:tasks -- --iterations 500 --warmup 50 --breakdown
 *
 * --breakdown also times, inside this process and against the same database, the domain handler
 * (DB round trips + row mapping) and the JSON/text rendering of each case, and prints EXPLAIN
 * ANALYZE of every SQL statement the cases run, to show where the end-to-end time goes.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { sql } from 'kysely';
import pg from 'pg';
import { openDb, type Db } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import type { TaskStatus, TaskType } from '../src/db/schema.js';
import { TASK_STATUSES, TASK_TYPES } from '../src/db/schema.js';
import { runBreakdown, type BreakdownResult } from './lib/breakdown.js';
import { gitInfo } from './lib/git.js';
import { startService, type ServiceProcess } from './lib/child.js';
import { CpuMeter, machineCpuMs, type CpuPerCall } from './lib/cpu.js';
import { formatProfile, summarizeProfile, type ProfileSummary } from './lib/profile.js';
import { scratchPglite, scratchPostgres, type Scratch } from './lib/scratch.js';
import { seed, type SeededData, type SeedSizes } from './lib/seed.js';
import { rounded, summarize, type Summary } from './lib/stats.js';
import { Cleanups } from './lib/cleanup.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

const SIZES: SeedSizes = { projects: 100, phasesPerProject: 5, tasksPerPhase: 20 };

/** p95 targets (ms) on Postgres, per case; both transports must meet them. */
const TARGETS: Record<string, number> = {
  list_tasks: 15,
  list_tasks_filtered: 15,
  create_task: 10,
  update_task: 5,
  list_plans: 20,
};

/** In the order they run: the list_tasks cases see the 10k seeded tasks; list_plans runs after the writes. */
const CASE_KEYS = ['baseline', 'list_tasks', 'list_tasks_filtered', 'create_task', 'update_task', 'list_plans'];

const USAGE = `Usage: npm run bench:tasks [-- options]

Benchmarks the task and plan operations of devstream-hub over MCP and REST against Postgres.

Set DATABASE_URL to a Postgres server the benchmark may create (and drop) a scratch database on, e.g.
  DATABASE_URL=postgres://postgres@127.0.0.1:54329/postgres npm run bench:tasks

Options:
  --iterations N   measured calls per case and transport (default 400)
  --warmup N       unmeasured calls first (default 50)
  --breakdown      also time DB / handler / rendering in-process and print EXPLAIN ANALYZE (Postgres only)
  --only a,b       run only these cases (${CASE_KEYS.join(', ')})
  --via mcp|rest   measure one transport only
  --profile        run the service with --cpu-prof and summarize where its CPU time went (profile in bench/results/profiles/)
  --pglite         run on embedded PGlite instead (comparison only; targets are for Postgres)
  -h, --help       this text`;

type Transport = 'mcp' | 'rest';

interface CaseDef {
  key: string;
  label: string;
  /** One call; returns the number of items a list call returned (undefined for writes). */
  run: Record<Transport, (i: number) => Promise<{ returned?: number; total?: number } | void>>;
}

interface CaseResult {
  key: string;
  label: string;
  transport: Transport;
  latency_ms: Summary;
  /** CPU ms per call of the service process, its Postgres backends and the client (load-independent). */
  cpu_ms_per_call: CpuPerCall;
  /** Rows in micro_tasks when the series started. */
  tasks_in_db?: number;
  returned?: { min: number; max: number; total_matches: number | undefined };
  target_p95_ms?: number;
  pass?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Cleanup: everything started registers its undo (bench/lib/cleanup.ts).
const cleanups = new Cleanups('stopping the service and dropping the scratch database…');
const onCleanup = (what: string, fn: () => Promise<void>) => void cleanups.add(what, fn);

// ---------------------------------------------------------------------------------------------

function positiveInt(value: string | boolean | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`bench: --${name} must be a positive integer`);
    process.exit(2);
  }
  return n;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      pglite: { type: 'boolean', default: false },
      breakdown: { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      only: { type: 'string' },
      via: { type: 'string' },
      iterations: { type: 'string' },
      warmup: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: false,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const iterations = positiveInt(values.iterations, 400, 'iterations');
  const warmup = positiveInt(values.warmup, 50, 'warmup');
  const usePglite = values.pglite === true;
  const baseUrl = process.env.DATABASE_URL?.trim();
  if (!usePglite && !baseUrl) {
    console.error(
      'bench: DATABASE_URL is not set. The benchmark needs a Postgres server on which it may create and drop a\n' +
        'scratch database (the targets are for Postgres). For example:\n\n' +
        '  DATABASE_URL=postgres://postgres@127.0.0.1:54329/postgres npm run bench:tasks\n\n' +
        'or, for a comparison run on embedded PGlite (no targets): npm run bench:tasks -- --pglite',
    );
    return 2;
  }
  const only = values.only
    ?.split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  const unknown = only?.filter((k) => !CASE_KEYS.includes(k)) ?? [];
  if (unknown.length) {
    console.error(`bench: --only: unknown case(s) ${unknown.join(', ')}; cases: ${CASE_KEYS.join(', ')}`);
    return 2;
  }
  if (values.via !== undefined && values.via !== 'mcp' && values.via !== 'rest') {
    console.error('bench: --via must be mcp or rest');
    return 2;
  }
  const transports: Transport[] = values.via ? [values.via as Transport] : ['mcp', 'rest'];
  if (usePglite && values.breakdown) {
    console.error('bench: --breakdown needs Postgres (PGlite allows one process at a time)');
    return 2;
  }

  // 1. Scratch database, migrated and seeded.
  const scratch: Scratch = usePglite ? await scratchPglite() : await scratchPostgres(baseUrl!);
  onCleanup(`drop ${scratch.label}`, () => scratch.drop());
  console.error(`bench: scratch database ${scratch.label}`);

  const db: Db = await openDb(scratch.dbOptions);
  let dbClosed: Promise<void> | undefined;
  const closeDb = () => (dbClosed ??= db.close());
  onCleanup('close bench connection', closeDb);
  await migrate(db.kysely);
  const seedStart = performance.now();
  const seeded = await seed(db.kysely, SIZES);
  const seedMs = performance.now() - seedStart;
  const serverVersion = (await sql<{ v: string }>`select version() as v`.execute(db.kysely)).rows[0]?.v ?? 'unknown';
  console.error(
    `bench: seeded ${seeded.counts.plans} projects, ${seeded.counts.phases} phases, ${seeded.counts.tasks} tasks in ${seedMs.toFixed(0)} ms; vacuum analyzed`,
  );
  // Closed before measuring: PGlite allows one process per data directory, and on Postgres the
  // service's backends are then the only ones named 'devstream-hub' (for the CPU accounting).
  await closeDb();
  const loadBefore = os.loadavg();
  // One second of /proc/stat while this benchmark is idle: how busy is the machine with other work?
  const m0 = machineCpuMs();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const m1 = machineCpuMs();
  const busyBefore =
    m0 && m1 && m1.total > m0.total ? Math.round(((m1.busy - m0.busy) / (m1.total - m0.total)) * 1000) / 10 : null;
  if (busyBefore !== null && busyBefore > 20) {
    console.error(
      `bench: WARNING: other work keeps ${busyBefore}% of the machine's CPU busy (load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')}); ` +
        'wall-clock figures will be inflated and unstable (the CPU-per-call figures less so)',
    );
  }

  // 2. The service, as a child process.
  const profileDir = values.profile
    ? `${RESULTS_DIR}profiles/${new Date().toISOString().replace(/[:.]/g, '-')}`
    : undefined;
  if (profileDir) await mkdir(profileDir, { recursive: true });
  const service: ServiceProcess = await startService({
    cwd: ROOT,
    nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    env: { ...scratch.env, LOG_LEVEL: 'warn' },
    onLine: (line) => console.error(`[service] ${line}`),
  });
  onCleanup(`stop service (pid ${service.pid})`, () => service.stop());
  console.error(`bench: service pid ${service.pid} ready at ${service.url}`);

  let monitor: pg.Client | undefined;
  if (scratch.dbOptions.databaseUrl) {
    monitor = new pg.Client({
      connectionString: scratch.dbOptions.databaseUrl,
      application_name: 'devstream-hub-bench',
    });
    await monitor.connect();
    const m = monitor;
    onCleanup('close monitor connection', () => m.end());
  }
  const cpu = new CpuMeter(service.pid, monitor);

  // 3. Clients.
  const client = new Client({ name: 'devstream-hub-bench', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', service.url));
  await client.connect(transport);
  let clientClosed: Promise<void> | undefined;
  const closeClient = () =>
    (clientClosed ??= (async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    })());
  onCleanup('close MCP client', closeClient);
  // As an agent would: list the tools first (the client then validates structuredContent against outputSchema).
  await client.listTools();

  const allCases = defineCases(client, service.url, seeded);
  const cases = only ? allCases.filter((c) => only.includes(c.key)) : allCases;

  // 4. Measure.
  const results: CaseResult[] = [];
  for (const c of cases) {
    for (const t of transports) {
      if (cleanups.interrupted) throw new Error('interrupted');
      const run = c.run[t];
      for (let i = 0; i < warmup && !cleanups.interrupted; i++) await run(-1 - i);
      const tasksInDb = monitor
        ? (await monitor.query<{ n: number }>('select count(*)::int as n from micro_tasks')).rows[0]?.n
        : undefined;
      await cpu.start();
      const samples: number[] = [];
      let min = Infinity;
      let max = -Infinity;
      let total: number | undefined;
      for (let i = 0; i < iterations; i++) {
        if (cleanups.interrupted) throw new Error('interrupted');
        const t0 = performance.now();
        const out = await run(i);
        samples.push(performance.now() - t0);
        if (out && out.returned !== undefined) {
          min = Math.min(min, out.returned);
          max = Math.max(max, out.returned);
          total = out.total;
        }
      }
      const cpuPerCall = await cpu.stop(iterations);
      const s = summarize(samples);
      const target = usePglite ? undefined : TARGETS[c.key];
      const result: CaseResult = {
        key: c.key,
        label: c.label,
        transport: t,
        latency_ms: rounded(s),
        cpu_ms_per_call: cpuPerCall,
      };
      if (tasksInDb !== undefined) result.tasks_in_db = tasksInDb;
      if (min !== Infinity) result.returned = { min, max, total_matches: total };
      if (target !== undefined) {
        result.target_p95_ms = target;
        result.pass = s.p95 < target;
      }
      results.push(result);
      console.error(
        `bench: ${c.key.padEnd(20)} ${t.padEnd(4)} p50 ${s.p50.toFixed(2).padStart(7)}  p95 ${s.p95.toFixed(2).padStart(7)}  p99 ${s.p99.toFixed(2).padStart(7)} ms` +
          `  cpu/call service ${cpuPerCall.service ?? '?'} pg ${cpuPerCall.postgres ?? '?'} client ${cpuPerCall.client} ms, other load ${bgText(cpuPerCall)}`,
      );
    }
  }

  // 5. Optional in-process breakdown and query plans, against the same (now written-to) database.
  let breakdown: BreakdownResult | undefined;
  const loadAfter = os.loadavg();
  if (values.breakdown && scratch.dbOptions.databaseUrl) {
    console.error('bench: breakdown (in-process handler / rendering timings, EXPLAIN ANALYZE)…');
    breakdown = await runBreakdown(seeded, {
      iterations: Math.min(iterations, 300),
      warmup,
      databaseUrl: scratch.dbOptions.databaseUrl!,
    });
  }

  let profile: ProfileSummary | undefined;
  if (profileDir) {
    await closeClient(); // an open MCP session would hold the graceful shutdown
    await service.stop(); // the profile is written when the process exits
    const file = (await readdir(profileDir)).find((f) => f.endsWith('.cpuprofile'));
    if (file) profile = await summarizeProfile(`${profileDir}/${file}`, ROOT);
    else console.error(`bench: no .cpuprofile in ${profileDir}`);
  }

  const finalCounts = monitor
    ? (await monitor.query<{ n: number }>('select count(*)::int as n from micro_tasks')).rows[0]?.n
    : undefined;

  // 6. Report.
  const targets = results
    .filter((r) => r.target_p95_ms !== undefined)
    .map((r) => ({
      case: r.key,
      transport: r.transport,
      metric: 'p95',
      threshold_ms: r.target_p95_ms!,
      actual_ms: r.latency_ms.p95,
      pass: r.pass!,
    }));
  const report = {
    benchmark: 'devstream-hub tasks',
    engine: usePglite ? 'pglite (embedded, comparison only: the targets are for Postgres)' : 'postgres',
    date: new Date().toISOString(),
    node: process.version,
    database_server: serverVersion,
    machine: {
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? 'unknown',
      total_memory_bytes: os.totalmem(),
      total_memory_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      load_average_before: loadBefore.map((x) => Math.round(x * 100) / 100),
      cpu_busy_pct_before: busyBefore,
      load_average_after: loadAfter.map((x) => Math.round(x * 100) / 100),
    },
    git: gitInfo(ROOT),
    service: {
      command: 'node --import tsx src/main.ts serve',
      log_level: 'warn',
      mcp_stateless: ['1', 'true'].includes(process.env.MCP_STATELESS ?? ''),
      mcp_client:
        'MCP SDK Client + StreamableHTTPClientTransport (tools listed first, so results are validated against outputSchema)',
      rest_client: 'global fetch (undici, keep-alive)',
    },
    seed: {
      projects: SIZES.projects,
      phases_per_project: SIZES.phasesPerProject,
      tasks_per_phase: SIZES.tasksPerPhase,
      totals: seeded.counts,
      tasks_after_run: finalCounts,
      seeding_ms: Math.round(seedMs),
      distribution: seeded.distribution,
    },
    iterations: { warmup, measured: iterations, sequential: true },
    cases: results,
    targets: usePglite ? [] : targets,
    pass: usePglite ? null : targets.every((t) => t.pass),
    ...(breakdown ? { breakdown } : {}),
    ...(profile ? { service_profile: profile } : {}),
  };

  const table = formatTable(results);
  console.log('');
  console.log(
    `devstream-hub tasks benchmark — ${report.engine}, ${seeded.counts.tasks} tasks, ${iterations} calls per row after ${warmup} warm-up`,
  );
  console.log(
    `${report.database_server.split(' on ')[0]} · Node ${report.node} · ${report.machine.cpus} CPUs · ${report.machine.total_memory_gib} GiB`,
  );
  console.log('');
  console.log(table);
  if (breakdown) {
    console.log('');
    console.log(breakdown.text);
  }
  const busiest = Math.max(0, ...results.map((r) => r.cpu_ms_per_call.background_pct ?? 0));
  if (busiest > 15) {
    console.log('');
    console.log(
      `Note: other processes used up to ${busiest.toFixed(0)}% of the machine's CPU during a series ("other load"); ` +
        'wall-clock percentiles from a busy host are inflated. Re-run on a quiet machine before acting on a near miss.',
    );
  }
  if (profile) {
    console.log('');
    console.log(
      formatProfile(profile, `Service CPU profile (${cases.map((c) => c.key).join(', ')}, warm-up included)`),
    );
  }
  if (!usePglite) {
    console.log('');
    console.log(
      `Targets (p95, both transports): ${
        report.pass
          ? 'ALL PASS'
          : 'MISSED: ' +
            targets
              .filter((t) => !t.pass)
              .map((t) => `${t.case}/${t.transport} ${t.actual_ms.toFixed(2)} ≥ ${t.threshold_ms} ms`)
              .join(', ')
      }`,
    );
  }

  await mkdir(RESULTS_DIR, { recursive: true });
  // Partial or profiled runs must not overwrite the reference results.
  const base = usePglite ? 'tasks-pglite' : only || values.via || profileDir ? 'tasks-diagnostic' : 'tasks';
  await writeFile(`${RESULTS_DIR}${base}.json`, JSON.stringify(report, null, 2) + '\n');
  await writeFile(`${RESULTS_DIR}${base}.md`, formatMarkdown(report, results, breakdown));
  console.log(`\nWrote bench/results/${base}.json and bench/results/${base}.md`);
  return usePglite || report.pass ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------

type ToolResult = {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, any>;
};

function defineCases(client: Client, baseUrl: string, seeded: SeededData): CaseDef[] {
  const mcp = async (name: string, args: Record<string, unknown>): Promise<Record<string, any>> => {
    const result = (await client.callTool({ name, arguments: args })) as ToolResult;
    if (result.isError || !result.structuredContent) {
      throw new Error(`MCP ${name} failed: ${result.content.map((c) => c.text ?? '').join(' ')}`);
    }
    return result.structuredContent;
  };
  const rest = async (method: string, path: string, body?: unknown, expect = 200): Promise<any> => {
    const response = await fetch(new URL(path, baseUrl), {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== expect) throw new Error(`REST ${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  const listed = (out: { tasks: unknown[]; total: number }) => ({ returned: out.tasks.length, total: out.total });
  const plansListed = (out: { plans: Array<{ phases: unknown[] }>; total: number }) => ({
    returned: out.plans.length,
    total: out.total,
  });

  // create: a new task into an existing project/phase, spread over all of them.
  let created = 0;
  const newTask = () => {
    const k = created++;
    const plan = seeded.plans[(k * 37) % seeded.plans.length]!;
    const phase = plan.phases[k % plan.phases.length]!;
    const type: TaskType = TASK_TYPES[k % TASK_TYPES.length]!;
    return {
      title: `Bench task ${k}: tighten validation of webhook payloads`,
      description: 'Created by the benchmark. Reject payloads without a signature and log the sender.',
      task_type: type,
      priority: 1 + (k % 10),
      phase_name: phase.name,
      project: plan.title,
    };
  };

  // update: the next status in the cycle, on a different seeded task each time.
  const status = new Map(seeded.tasks.map((t) => [t.id, t.status]));
  let updated = 0;
  const nextUpdate = () => {
    const k = updated++;
    const task = seeded.tasks[(k * 7919) % seeded.tasks.length]!;
    const from = status.get(task.id)!;
    const to: TaskStatus = TASK_STATUSES[(TASK_STATUSES.indexOf(from) + 1) % TASK_STATUSES.length]!;
    status.set(task.id, to);
    return { id: task.id, from, to };
  };
  const checkUpdate = (out: { task: { status: string }; previous_status: string }, u: { from: string; to: string }) => {
    if (out.task.status !== u.to || out.previous_status !== u.from) {
      throw new Error(`update returned ${out.previous_status} → ${out.task.status}, expected ${u.from} → ${u.to}`);
    }
  };

  return [
    {
      key: 'baseline',
      label: 'baseline: MCP ping / GET /healthz (no DB)',
      run: {
        mcp: async () => void (await client.ping()),
        rest: async () => void (await rest('GET', '/healthz')),
      },
    },
    {
      key: 'list_tasks',
      label: 'list_tasks, no filter (default page 100)',
      run: {
        mcp: async () => listed((await mcp('devstream_list_tasks', {})) as never),
        rest: async () => listed(await rest('GET', '/api/v1/tasks')),
      },
    },
    {
      key: 'list_tasks_filtered',
      label: 'list_tasks status=pending priority>=7',
      run: {
        mcp: async () => listed((await mcp('devstream_list_tasks', { status: 'pending', priority: 7 })) as never),
        rest: async () => listed(await rest('GET', '/api/v1/tasks?status=pending&priority=7')),
      },
    },
    {
      key: 'create_task',
      label: 'create_task into existing project/phase',
      run: {
        mcp: async () => void (await mcp('devstream_create_task', newTask())),
        rest: async () => void (await rest('POST', '/api/v1/tasks', newTask(), 201)),
      },
    },
    {
      key: 'update_task',
      label: 'update_task status (cycling)',
      run: {
        mcp: async () => {
          const u = nextUpdate();
          checkUpdate((await mcp('devstream_update_task', { task_id: u.id, status: u.to })) as never, u);
        },
        rest: async () => {
          const u = nextUpdate();
          checkUpdate(await rest('PATCH', `/api/v1/tasks/${u.id}`, { status: u.to }), u);
        },
      },
    },
    {
      key: 'list_plans',
      label: 'list_plans, no filter (100 plans + phases), after the writes',
      run: {
        mcp: async () => plansListed((await mcp('devstream_list_plans', {})) as never),
        rest: async () => plansListed(await rest('GET', '/api/v1/plans')),
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------------

const f = (x: number) => x.toFixed(2);

const cpuText = (c: CpuPerCall) =>
  [c.service, c.postgres, c.client].map((x) => (x === null ? '?' : x.toFixed(2))).join(' + ');
const bgText = (c: CpuPerCall) => (c.background_pct === null ? '?' : `${c.background_pct.toFixed(0)}%`);

function formatTable(results: CaseResult[]): string {
  const header = [
    'case',
    'via',
    'p50',
    'p95',
    'p99',
    'mean',
    'max',
    'returned/total',
    'p95 target',
    'CPU/call svc+pg+client',
    'other load',
  ];
  const rows = results.map((r) => [
    r.key,
    r.transport,
    f(r.latency_ms.p50),
    f(r.latency_ms.p95),
    f(r.latency_ms.p99),
    f(r.latency_ms.mean),
    f(r.latency_ms.max),
    r.returned
      ? `${r.returned.min === r.returned.max ? r.returned.min : `${r.returned.min}-${r.returned.max}`}/${r.returned.total_matches ?? '?'}`
      : '',
    r.target_p95_ms === undefined ? '' : `< ${r.target_p95_ms} ${r.pass ? 'PASS' : 'FAIL'}`,
    cpuText(r.cpu_ms_per_call),
    bgText(r.cpu_ms_per_call),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header) + '   (ms)', widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function formatMarkdown(
  report: Record<string, any>,
  results: CaseResult[],
  breakdown: BreakdownResult | undefined,
): string {
  const lines = [
    `# devstream-hub tasks benchmark`,
    '',
    `- Date: ${report.date}`,
    `- Engine: ${report.engine} — ${String(report.database_server).split(' on ')[0]}`,
    `- Node ${report.node}; ${report.machine.cpus} CPUs (${report.machine.cpu_model}); ${report.machine.total_memory_gib} GiB RAM; ${report.machine.platform}`,
    `- Commit: ${report.git.commit ?? 'unknown'}${report.git.dirty ? ' (dirty working tree)' : ''}`,
    `- Seed: ${report.seed.projects} projects × ${report.seed.phases_per_project} phases × ${report.seed.tasks_per_phase} tasks = ${report.seed.totals.tasks} tasks`,
    `- Machine CPU busy with other work just before: ${report.machine.cpu_busy_pct_before ?? '?'}%; load average before/after: ${report.machine.load_average_before.join(' ')} / ${report.machine.load_average_after.join(' ')}`,
    `- ${report.iterations.measured} sequential calls per row after ${report.iterations.warmup} warm-up; service in a child process; MCP via SDK Client (Streamable HTTP), REST via fetch`,
    '',
    '| case | via | p50 ms | p95 ms | p99 ms | mean ms | tasks in DB | returned / total | p95 target | CPU ms/call: service + Postgres + client | other load |',
    '|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.label} | ${r.transport.toUpperCase()} | ${f(r.latency_ms.p50)} | ${f(r.latency_ms.p95)} | ${f(r.latency_ms.p99)} | ${f(r.latency_ms.mean)} | ${r.tasks_in_db ?? ''} | ` +
        `${r.returned ? `${r.returned.max} / ${r.returned.total_matches ?? '?'}` : ''} | ${r.target_p95_ms === undefined ? '' : `< ${r.target_p95_ms} ms: ${r.pass ? '✅ pass' : '❌ FAIL'}`} | ${cpuText(r.cpu_ms_per_call)} | ${bgText(r.cpu_ms_per_call)} |`,
    ),
    '',
  ];
  lines.push(
    'CPU ms/call: CPU time per call of the service process, of its Postgres backends and of the client (this process), from /proc; ' +
      '"other load": share of the machine\'s CPU used meanwhile by anything else (high = noisy figures).',
    '',
  );
  if (report.pass === null)
    lines.push('PGlite runs inside the service process: its CPU is part of the service figure.', '');
  if (report.pass !== null) lines.push(`**Targets: ${report.pass ? 'all met' : 'some missed'}.**`, '');
  if (breakdown) {
    // The summary lines only; the query plans are in the JSON file.
    const summary = breakdown.text.split('\n').filter((l) => !l.startsWith('    '));
    lines.push(
      '## Breakdown (in-process, same database; EXPLAIN ANALYZE plans in the JSON)',
      '',
      '```',
      ...summary,
      '```',
      '',
    );
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------

main()
  .catch((error: unknown) => {
    if (!cleanups.interrupted)
      console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  })
  .then(async (code) => {
    await cleanups.run();
    if (!cleanups.interrupted) process.exit(code);
  });
