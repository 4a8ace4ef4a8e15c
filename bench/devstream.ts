/**
 * DevStream's own workload against this service: `npm run bench:devstream` (not part of `npm test`).
 *
 * Runs the shared harness (../shared/bench/devstream-workload: the workload, op table and MCP SDK 1.32
 * client DevStream was measured with) against the service on Postgres and on PGlite, each from a fresh
 * store, then takes the per-call breakdown on the same seeded service (MCP ping, the ops over REST with
 * Server-Timing, pg_stat_statements on Postgres, the CPU of each call by process), and writes
 * bench/results/devstream-workload.{json,md} with DevStream's recorded figures beside ours, the ratio per
 * op and the targets.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5433/postgres npm run bench:devstream
 *   npm run bench:devstream -- --quick                      a small store, 30 calls per op (~1 min)
 *   npm run bench:devstream -- --memories 100000            the same at another project size
 *   npm run bench:devstream -- --backends pglite
 *
 * The harness is copied into node_modules/.cache/devstream-bench/ and its pinned SDK installed there
 * (bench/lib/devstream-harness.ts); it is never part of the repo.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startService } from './lib/child.js';
import { CpuMeter, machineCpuMs } from './lib/cpu.js';
import {
  diskUsage,
  HARNESS_SOURCE,
  loadDevstreamRuns,
  loadWorkload,
  OPS,
  prepareHarness,
  runHarness,
  startFakeOllama,
  type HarnessResult,
} from './lib/devstream-harness.js';
import {
  probePing,
  probeRest,
  probeSearchPair,
  StatementStats,
  type ProbeSizes,
  type SearchPairResult,
} from './lib/devstream-probes.js';
import { checkTargets, formatMarkdown, type Backend, type BackendResult, type Report } from './lib/devstream-report.js';
import { gitInfo } from './lib/git.js';
import { cpuCalibrationMs, machine } from './lib/machine.js';
import { waitForEmbeddings } from './lib/memory-service.js';
import { scratchPglite, scratchPostgres, type Scratch } from './lib/scratch.js';
import { Cleanups } from './lib/cleanup.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RESULTS_DIR = join(ROOT, 'bench/results/');

const USAGE = `Usage: npm run bench:devstream [-- options]

Replays DevStream's recorded workload (../shared/bench/devstream-workload) against the service over MCP
(Streamable HTTP, 2025-era session), on Postgres (when DATABASE_URL is set: a scratch database is
created and dropped) and on PGlite (a scratch directory), each from an empty store; then times MCP ping,
the same ops over REST (Server-Timing), on Postgres their SQL (pg_stat_statements), and the CPU each
call takes by process (client, service, Postgres, embedder). Writes
bench/results/devstream-workload.{json,md} with DevStream's figures beside ours and the targets.

  DATABASE_URL=postgres://postgres@127.0.0.1:5433/postgres npm run bench:devstream

Options:
  --backends a,b   postgres, pglite (default: both, postgres only when DATABASE_URL is set)
  --memories N     memories seeded (default 10000; other sizes write devstream-workload-<N>.*)
  --quick          small store, 30 calls per op (writes devstream-workload.quick.*; targets informational)
  -h, --help       this text

A run with one backend only writes devstream-workload.<backend>.* (the reference files hold both).
Exits 1 when a run fails (harness failure, errors), 2 on bad usage or a missing harness; a missed
target is reported, not an exit code.`;

// Cleanup: everything started registers its undo (bench/lib/cleanup.ts).
const cleanups = new Cleanups('stopping the harness, the service and fake-ollama, dropping the scratch stores…');
const onCleanup = (what: string, fn: () => Promise<void>) => cleanups.add(what, fn);

const log = (line: string) => console.error(`bench: ${line}`);

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        backends: { type: 'string' },
        memories: { type: 'string' },
        quick: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: false,
    }));
  } catch (error) {
    console.error(`bench: ${(error as Error).message}\n(npm run bench:devstream -- --help)`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const baseUrl = process.env.DATABASE_URL?.trim() || undefined;
  // The services get their database from scratch.env only: a PGlite service that inherited DATABASE_URL
  // would run on that server's database instead.
  delete process.env.DATABASE_URL;
  const backends = (values.backends ?? (baseUrl ? 'postgres,pglite' : 'pglite'))
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  const unknown = backends.filter((b) => b !== 'postgres' && b !== 'pglite');
  if (unknown.length || backends.length === 0) {
    console.error(`bench: --backends: unknown backend(s) ${unknown.join(', ')}; backends: postgres, pglite`);
    return 2;
  }
  if (backends.includes('postgres') && !baseUrl) {
    console.error(
      'bench: the postgres backend needs DATABASE_URL: a Postgres server (with pgvector) on which the bench may\n' +
        'create and drop a scratch database, e.g.\n\n' +
        '  DATABASE_URL=postgres://postgres@127.0.0.1:5433/postgres npm run bench:devstream\n\n' +
        'or run PGlite only: npm run bench:devstream -- --backends pglite',
    );
    return 2;
  }
  let memories: number | undefined;
  if (values.memories !== undefined) {
    memories = Number(values.memories);
    if (!Number.isInteger(memories) || memories < 1) {
      console.error('bench: --memories must be a positive integer');
      return 2;
    }
  }
  const quick = values.quick === true;
  if (!existsSync(join(HARNESS_SOURCE, 'bench-http.mjs'))) {
    console.error(
      `bench: DevStream's workload harness is not there: ${HARNESS_SOURCE}\n` +
        '(the shared folder beside the repository, ../shared/bench/devstream-workload, with bench-http.mjs,\n' +
        'bench-core.mjs, workload.mjs, fake-ollama.mjs, package.json and the recorded devstream-10k-run*.json)',
    );
    return 2;
  }

  const devstream = await loadDevstreamRuns();
  const cacheDir = await prepareHarness(log);
  const sizes: ProbeSizes = quick ? { warmup: 5, iters: 30 } : { warmup: 20, iters: 200 };

  const loadBefore = os.loadavg();
  const calibrationBefore = cpuCalibrationMs();
  const m0 = machineCpuMs();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const m1 = machineCpuMs();
  const busyBefore =
    m0 && m1 && m1.total > m0.total ? Math.round(((m1.busy - m0.busy) / (m1.total - m0.total)) * 1000) / 10 : null;
  if (busyBefore !== null && busyBefore > 20)
    log(
      `WARNING: other work keeps ${busyBefore}% of the machine's CPU busy; the figures will be inflated and unstable`,
    );

  const fake = await startFakeOllama(cacheDir);
  onCleanup('stop fake-ollama', () => fake.stop());
  log(`fake-ollama (pid ${fake.pid}) at ${fake.url}`);

  const work = await mkdtemp(join(os.tmpdir(), 'dsh-bench-devstream-'));
  onCleanup('remove harness output', () => rm(work, { recursive: true, force: true }));

  const results: Partial<Record<Backend, BackendResult>> = {};
  for (const backend of backends as Backend[]) {
    if (cleanups.interrupted) break;
    results[backend] = await runBackend(backend, {
      baseUrl,
      cacheDir,
      fakeUrl: fake.url,
      fakePid: fake.pid,
      work,
      memories,
      quick,
      sizes,
    });
  }

  if (cleanups.interrupted) return 130; // the signal handler cleans up and exits; no partial results

  const report: Report = {
    benchmark: "DevStream's workload (../shared/bench/devstream-workload) against devstream-hub",
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    memories: memories ?? (quick ? 300 : 10_000),
    git: gitInfo(ROOT, { paths: ['src'] }),
    machine: {
      ...machine(),
      platform: `${os.platform()} ${os.release()}`,
      cpu_busy_pct_before: busyBefore,
      load_average_before: loadBefore.map((x) => Math.round(x * 100) / 100),
      load_average_after: os.loadavg().map((x) => Math.round(x * 100) / 100),
      cpu_calibration_ms_before: calibrationBefore,
      cpu_calibration_ms_after: cpuCalibrationMs(),
    },
    harness: {
      source: '../shared/bench/devstream-workload',
      cache: 'node_modules/.cache/devstream-bench/devstream-workload',
      client_sdk: Object.values(results).find((r) => r.harness)?.harness?.meta.client_sdk.version ?? null,
      ops: OPS,
      probe_sizes: sizes,
    },
    devstream,
    backends: results,
    targets: [],
    failed: Object.values(results).some((r) => r.failures.length > 0),
  };
  report.targets = checkTargets(devstream, results);

  const markdown = formatMarkdown(report);
  const size = memories !== undefined && memories !== 10_000 ? `-${memories}` : '';
  const only = backends.length === 1 ? `.${backends[0]}` : '';
  const base = `devstream-workload${size}${only}${quick ? '.quick' : ''}`;
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(`${RESULTS_DIR}${base}.json`, JSON.stringify(report, null, 2) + '\n');
  await writeFile(`${RESULTS_DIR}${base}.md`, markdown);
  console.log(markdown);
  console.log(`Wrote bench/results/${base}.json and bench/results/${base}.md`);
  return report.failed || cleanups.interrupted ? 1 : 0;
}

/** One backend: fresh store, service, harness run, breakdown probes, size; everything stopped after. */
async function runBackend(
  backend: Backend,
  options: {
    baseUrl: string | undefined;
    cacheDir: string;
    fakeUrl: string;
    fakePid: number;
    work: string;
    memories: number | undefined;
    quick: boolean;
    sizes: ProbeSizes;
  },
): Promise<BackendResult> {
  const scratch: Scratch = backend === 'postgres' ? await scratchPostgres(options.baseUrl!) : await scratchPglite();
  const drop = onCleanup(`drop ${scratch.label}`, () => scratch.drop());
  log(`${backend}: scratch store ${scratch.label}`);
  // Before the service connects: its sessions then count their planning too (the breakdown's SQL).
  const planning = scratch.dbOptions.databaseUrl
    ? await StatementStats.trackPlanning(scratch.dbOptions.databaseUrl)
    : null;
  if (planning) log(`${backend}: planning not tracked (${planning})`);

  const serviceLines: string[] = [];
  let serviceLineCount = 0;
  const service = await startService({
    cwd: ROOT,
    env: { ...scratch.env, OLLAMA_HOST: options.fakeUrl, LOG_LEVEL: 'warn' },
    onLine: (line) => {
      serviceLineCount++;
      if (serviceLines.length < 20) serviceLines.push(line);
      console.error(`[service ${backend}] ${line}`);
    },
  });
  const stopService = onCleanup(`stop service (pid ${service.pid})`, () => service.stop());
  log(`${backend}: service pid ${service.pid} ready at ${service.url}`);
  if (scratch.dbOptions.dataDir && !existsSync(join(scratch.dbOptions.dataDir, 'PG_VERSION'))) {
    await stopService();
    await drop();
    throw new Error(`the PGlite service did not open ${scratch.dbOptions.dataDir} (is it on another database?)`);
  }

  const result: BackendResult = {
    backend,
    location: scratch.label,
    database_server: null,
    harness_exit_code: -1,
    failures: [],
    harness: null,
    breakdown: null,
    data_size_bytes: null,
    service_lines: { count: 0, first: [] },
  };
  let monitor: pg.Client | undefined;
  let closeMonitor = async () => {};
  let closeStats = async () => {};
  try {
    if (scratch.dbOptions.databaseUrl) {
      monitor = new pg.Client({
        connectionString: scratch.dbOptions.databaseUrl,
        application_name: 'devstream-hub-bench',
      });
      await monitor.connect();
      const m = monitor;
      closeMonitor = onCleanup('close monitor connection', () => m.end());
      result.database_server =
        (
          await monitor.query<{ v: string }>(
            // The memory it searches in: a store larger than shared_buffers is read from the OS's cache.
            `select split_part(version(), ' on ', 1) || ', shared_buffers ' || current_setting('shared_buffers')
                    || ', huge_pages ' || current_setting('huge_pages') as v`,
          )
        ).rows[0]?.v ?? null;
    }

    // 1. The harness: seeding, then each op sequentially and 10 in flight.
    const out = join(options.work, `${backend}.json`);
    const args = [
      '--ollama-url',
      options.fakeUrl,
      '--server-pid',
      String(service.pid),
      '--only',
      OPS.join(','),
      '--out',
      out,
      ...(options.memories !== undefined ? ['--memories', String(options.memories)] : []),
      ...(options.quick ? ['--quick'] : []),
    ];
    const harness = runHarness(options.cacheDir, `${service.url}/mcp`, args, (line) =>
      console.error(`[harness ${backend}] ${line}`),
    );
    const stopHarness = onCleanup(`stop harness (pid ${harness.pid})`, () => harness.stop());
    result.harness_exit_code = await harness.done;
    await stopHarness();
    if (cleanups.interrupted) throw new Error('interrupted');
    if (result.harness_exit_code !== 0)
      result.failures.push(`the harness exited with code ${result.harness_exit_code}`);
    if (!alive(service.pid)) {
      // It answered /readyz at the start; nothing here stops it before the end.
      result.failures.push(
        `the service (pid ${service.pid}) exited during the harness run: stopped by something outside this benchmark? ` +
          `Its last lines: ${JSON.stringify(service.output().split('\n').slice(-3))}`,
      );
    }
    if (!existsSync(out)) {
      result.failures.push('the harness wrote no result');
      return result;
    }
    const h = JSON.parse(await readFile(out, 'utf8')) as HarnessResult;
    result.harness = {
      meta: h.meta,
      summary_ms: h.summary_ms,
      seeding: h.seeding,
      sequential: h.sequential,
      concurrent: h.concurrent,
      snapshots: h.snapshots,
      final_server_process: h.final_server_process,
      protocol_noise: h.protocol_noise,
      embedder: h.embedder,
      failure: h.failure,
    };
    if (h.failure) result.failures.push(`harness failure: ${h.failure.split('\n')[0]}`);
    for (const [what, s] of Object.entries(h.seeding ?? {}))
      if (s?.errors) result.failures.push(`seeding ${what}: ${s.errors} errors (${JSON.stringify(s.error_samples)})`);
    for (const op of OPS) {
      const s = h.summary_ms[op];
      if (!s) {
        result.failures.push(`${op}: no figures`);
        continue;
      }
      if (s.seq_errors || s.conc_errors) {
        const samples = [...(h.sequential[op]?.error_samples ?? []), ...(h.concurrent[op]?.error_samples ?? [])];
        result.failures.push(
          `${op}: errors seq ${s.seq_errors}, c10 ${s.conc_errors ?? 0} (${JSON.stringify(samples.slice(0, 2))})`,
        );
      }
    }
    if (h.protocol_noise?.count)
      log(`${backend}: ${h.protocol_noise.count} protocol errors seen by the harness client`);

    // 2. The breakdown, on the same seeded service.
    const taskIdsFile = out.replace(/\.json$/, '') + '.task-ids.json';
    if (!alive(service.pid)) {
      result.failures.push('breakdown skipped: the service is gone');
    } else if (existsSync(taskIdsFile)) {
      try {
        await waitForEmbeddings(service.url, 60_000);
      } catch (error) {
        log(`${backend}: ${(error as Error).message} (probing anyway)`);
      }
      const taskIds = JSON.parse(await readFile(taskIdsFile, 'utf8')) as Array<string | null>;
      const workload = await loadWorkload(options.cacheDir, h.meta.workload.options);
      if (workload.meta.fingerprint !== h.meta.workload.fingerprint)
        throw new Error('the workload generated here differs from the harness run (fingerprint)');
      const p = h.meta.params as { warmup: number; iters: number; concurrency: number };
      const consumed = (p.warmup + p.iters) * (p.concurrency > 1 ? 2 : 1);

      log(`${backend}: MCP ping (${options.sizes.iters} calls after ${options.sizes.warmup} warm-up)`);
      // CPU by process: the client is this process; on Postgres its backends apart, on PGlite inside the service.
      const cpu = new CpuMeter(service.pid, monitor, 'devstream-hub', options.fakePid);
      const ping = await probePing(options.cacheDir, `${service.url}/mcp`, options.sizes, cpu);
      log(`${backend}: ping p50 ${ping.latency_ms.p50} ms, p95 ${ping.latency_ms.p95} ms`);

      let stats: StatementStats | null = null;
      let pss: NonNullable<BackendResult['breakdown']>['pg_stat_statements'] = null;
      if (scratch.dbOptions.databaseUrl) {
        const opened = await StatementStats.open(scratch.dbOptions.databaseUrl);
        if (opened instanceof StatementStats) {
          stats = opened;
          closeStats = onCleanup('close pg_stat_statements connection', () => opened.close());
          pss = { available: true };
        } else {
          pss = { available: false, reason: opened.unavailable };
          log(`${backend}: pg_stat_statements not available (${opened.unavailable}); no SQL column`);
        }
      }
      const rest = await probeRest({
        baseUrl: service.url,
        workload,
        taskIds,
        consumed,
        sizes: options.sizes,
        stats,
        cpu,
        log: (line) => log(`${backend}: ${line}`),
      });
      for (const r of rest)
        if (r.errors) result.failures.push(`REST ${r.op}: ${r.errors} errors (${JSON.stringify(r.error_samples)})`);
      let searchPair: SearchPairResult | null = null;
      if (stats && monitor) {
        // As the harness's own search series: on a settled store, not beside the vectors and keyword
        // statistics of the REST series' stores (which ran last), on two CPUs.
        await settle(service.url, monitor, (line) => log(`${backend}: ${line}`));
        log(`${backend}: search_memory over MCP with pg_stat_statements on the same calls`);
        searchPair = await probeSearchPair({
          cacheDir: options.cacheDir,
          mcpUrl: `${service.url}/mcp`,
          workload,
          // After the queries the harness took and the REST series' warm-up and measured calls.
          first: consumed + options.sizes.warmup + options.sizes.iters,
          sizes: options.sizes,
          stats,
          cpu,
        });
        log(
          `${backend}: search over MCP mean ${searchPair.mcp_ms.mean} ms (p50 ${searchPair.mcp_ms.p50}), its SQL ${searchPair.own_sql_ms_per_call} ms a call` +
            ` (planning ${searchPair.own_plan_ms_per_call ?? 'not tracked'}): ${searchPair.ratio}×` +
            (searchPair.ratio_with_planning === null ? '' : `, ${searchPair.ratio_with_planning}× with planning`),
        );
        if (searchPair.errors) result.failures.push(`search pair: ${searchPair.errors} errors`);
      }
      result.breakdown = { ping, rest, pg_stat_statements: pss, search_pair: searchPair };
      if (!alive(service.pid)) result.failures.push(`the service (pid ${service.pid}) exited during the breakdown`);
    } else {
      result.failures.push('no task ids from the harness: breakdown skipped');
    }

    // 3. Size of the store.
    result.data_size_bytes = monitor
      ? Number(
          (await monitor.query<{ n: string }>('select pg_database_size(current_database()) as n')).rows[0]?.n ?? NaN,
        )
      : null;
  } catch (error) {
    if (!cleanups.interrupted) result.failures.push(`bench: ${(error as Error).message}`);
    if (!cleanups.interrupted) log(`${backend}: ${(error as Error).stack ?? String(error)}`);
  } finally {
    await closeStats().catch(() => {});
    await closeMonitor().catch(() => {});
    await stopService();
    if (scratch.dbOptions.dataDir) result.data_size_bytes = await diskUsage(scratch.dbOptions.dataDir);
    await drop();
    result.service_lines = { count: serviceLineCount, first: serviceLines };
  }
  log(
    `${backend}: done${result.data_size_bytes !== null ? `, data ${(result.data_size_bytes / 2 ** 20).toFixed(1)} MiB` : ''}${result.failures.length ? `; FAILED: ${result.failures.join('; ')}` : ''}`,
  );
  return result;
}

/**
 * Waits until the service's background work is done: the embedding queue empty, the keyword deltas
 * folded, and nothing (the worker, a fold's vacuum, autovacuum) running in the database for half a
 * second. Gives up after a minute and says so: the series then runs anyway.
 */
async function settle(url: string, monitor: pg.Client, log: (line: string) => void): Promise<void> {
  const deadline = Date.now() + 60_000;
  try {
    await waitForEmbeddings(url, 60_000);
  } catch (error) {
    log(`${(error as Error).message} (going on)`);
  }
  let quiet = 0;
  while (quiet < 5) {
    if (Date.now() > deadline) {
      log('background work still running after a minute (going on)');
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
    const { rows } = await monitor.query<{ deltas: number; busy: number }>(
      `select (select count(*) from memory_lexeme_delta)::int as deltas,
              (select count(*) from pg_stat_activity
                where datname = current_database() and state = 'active'
                  and application_name <> 'devstream-hub-bench')::int as busy`,
    );
    quiet = rows[0]!.deltas === 0 && rows[0]!.busy === 0 ? quiet + 1 : 0;
  }
}

/** Whether a process still runs (signal 0 only checks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

void main()
  .catch((error: unknown) => {
    if (!cleanups.interrupted)
      console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  })
  .then(async (code) => {
    await cleanups.run();
    if (!cleanups.interrupted) process.exit(code);
  })
  .catch(() => process.exit(1));
