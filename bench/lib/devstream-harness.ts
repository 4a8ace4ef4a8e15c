/**
 * DevStream's workload harness (`../shared/bench/devstream-workload`, read-only, outside the repo) as
 * `npm run bench:devstream` uses it: a scratch copy with its own pinned MCP SDK 1.32 client (the 2025
 * protocol era; the repo's own client is the SDK v2), its fake embedder, a harness run as a child
 * process, its workload generator, and DevStream's recorded runs.
 *
 * The harness code is never part of the repo: it is copied into node_modules/.cache/devstream-bench/
 * (refreshed when the source differs) and its one dependency installed there once.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../../support/free-port.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The harness beside the repo (resolved from the repo root, so any checkout location works). */
export const HARNESS_SOURCE = join(ROOT, '../shared/bench/devstream-workload');
/** The scratch copy the harness runs from. */
export const HARNESS_CACHE = join(ROOT, 'node_modules/.cache/devstream-bench/devstream-workload');

/** The 7 ops of DevStream's recorded runs (search_memory_minrel0 needs a parameter our spec does not have). */
export const OPS = [
  'list_plans',
  'list_tasks_nofilter',
  'list_tasks_status_priority',
  'search_memory',
  'create_task',
  'update_task',
  'store_memory',
] as const;
export type OpKey = (typeof OPS)[number];

/** One op's line of a harness result's `summary_ms` (conc_ok_ops_s only when the c10 series had errors). */
export interface OpSummary {
  seq_p50: number;
  seq_p95: number;
  seq_p99: number;
  seq_ops_s: number;
  seq_errors: number;
  conc_p50?: number;
  conc_p95?: number;
  conc_p99?: number;
  conc_ops_s?: number;
  conc_errors?: number;
  conc_ok_ops_s?: number;
}

/** The successful c10 throughput of an op: conc_ok_ops_s when the series had errors, else conc_ops_s. */
export const okOpsPerSecond = (s: OpSummary | undefined): number | undefined => s?.conc_ok_ops_s ?? s?.conc_ops_s;

/** What the harness writes to `--out` (the parts this benchmark reads). */
export interface HarnessResult {
  meta: {
    client_sdk: { version: string };
    server: { transport: string; session_id: string | null; connect_ms: number; tools: string[] };
    params: Record<string, unknown>;
    workload: { fingerprint: string; options: WorkloadOptions; counts: Record<string, number> };
  };
  summary_ms: Partial<Record<OpKey, OpSummary>>;
  embedder: unknown;
  seeding: {
    tasks?: { errors: number } & Record<string, unknown>;
    memories?: { errors: number } & Record<string, unknown>;
  };
  sequential: Record<string, { error_samples: string[] } & Record<string, unknown>>;
  concurrent: Record<string, { error_samples: string[] } & Record<string, unknown>>;
  snapshots: Record<string, unknown>;
  final_server_process: unknown;
  protocol_noise: { count: number; samples: string[] };
  failure: string | null;
}

export interface WorkloadOptions {
  seed: number;
  plans: number;
  phasesPerPlan: number;
  tasks: number;
  memories: number;
}

/** The argument pools of the harness's workload generator that the probes replay. */
export interface Workload {
  queries: string[];
  bench: {
    createTasks: Array<Record<string, unknown>>;
    storeMemories: Array<Record<string, unknown>>;
    updateOps: Array<{ task_index: number; status: string; notes?: string }>;
    listTaskFilters: Array<{ status: string; priority: number }>;
  };
  meta: { fingerprint: string };
}

const run = promisify(execFile);

/**
 * Copies the harness's *.mjs and package.json into the cache (only the files that differ) and installs
 * its dependency there when it is missing or package.json changed. Throws when the source is absent.
 */
export async function prepareHarness(log: (line: string) => void): Promise<string> {
  const files = (await readdir(HARNESS_SOURCE)).filter((f) => f.endsWith('.mjs') || f === 'package.json');
  await mkdir(HARNESS_CACHE, { recursive: true });
  let packageChanged = false;
  for (const file of files) {
    const from = join(HARNESS_SOURCE, file);
    const to = join(HARNESS_CACHE, file);
    const same = existsSync(to) && (await readFile(from)).equals(await readFile(to));
    if (same) continue;
    await copyFile(from, to);
    await chmod(to, 0o644); // the source is read-only; the next refresh overwrites the copy
    if (file === 'package.json') packageChanged = true;
    log(`harness: copied ${file}`);
  }
  const sdk = join(HARNESS_CACHE, 'node_modules/@modelcontextprotocol/sdk/package.json');
  if (packageChanged || !existsSync(sdk)) {
    await rm(join(HARNESS_CACHE, 'node_modules'), { recursive: true, force: true });
    await rm(join(HARNESS_CACHE, 'package-lock.json'), { force: true });
    log(`harness: npm install in ${HARNESS_CACHE} (once)…`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    await run(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: HARNESS_CACHE,
      maxBuffer: 16 * 1024 * 1024,
    });
  }
  return HARNESS_CACHE;
}

/** The harness's fake Ollama (hashed bag of words, 768-D) on a free loopback port. */
export interface FakeOllamaProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startFakeOllama(cacheDir: string, attempts = 3): Promise<FakeOllamaProcess> {
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = await freePort();
    const child = spawn(process.execPath, [join(cacheDir, 'fake-ollama.mjs'), String(port)], {
      cwd: cacheDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error('no LISTENING line within 10 s')), 10_000);
        child.stdout?.on('data', (chunk: Buffer) => {
          out += chunk.toString('utf8');
          if (/^LISTENING /m.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`fake-ollama exited (code ${code}): ${stderr.trim().slice(-300)}`));
        });
      });
    } catch (error) {
      lastError = error as Error;
      child.kill('SIGKILL');
      await exited;
      continue; // most likely the port was taken meanwhile
    }
    return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => stopChild(child, exited) };
  }
  throw new Error(`could not start fake-ollama.mjs: ${lastError?.message}`);
}

/** SIGTERM, SIGKILL after `graceMs`; resolves once the child has exited. */
async function stopChild(child: ChildProcess, exited: Promise<void>, graceMs = 3_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** A harness run in progress: `done` resolves with its exit code; `stop()` ends it early (cleanup). */
export interface HarnessRun {
  pid: number;
  done: Promise<number>;
  stop(): Promise<void>;
}

/** `node bench-http.mjs <mcpUrl> …args`, from the cache copy; each line it prints goes to `onLine`. */
export function runHarness(
  cacheDir: string,
  mcpUrl: string,
  args: string[],
  onLine: (line: string) => void,
): HarnessRun {
  const child = spawn(process.execPath, [join(cacheDir, 'bench-http.mjs'), mcpUrl, ...args], {
    cwd: cacheDir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) onLine(line);
  };
  child.stdout?.on('data', lines);
  child.stderr?.on('data', lines);
  const done = new Promise<number>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    child.once('error', () => resolve(1));
  });
  return { pid: child.pid ?? -1, done, stop: () => stopChild(child, exited) };
}

/** The harness's own `generateWorkload`, from the cache copy (same seed and sizes give the same data). */
export async function loadWorkload(cacheDir: string, options: WorkloadOptions): Promise<Workload> {
  const mod = (await import(pathToFileURL(join(cacheDir, 'workload.mjs')).href)) as {
    generateWorkload(options: WorkloadOptions): Workload;
  };
  return mod.generateWorkload(options);
}

/** The SDK 1.32 Client and Streamable HTTP transport the harness uses (2025 protocol era). */
export async function loadHarnessSdk(cacheDir: string): Promise<{ Client: any; StreamableHTTPClientTransport: any }> {
  const base = join(cacheDir, 'node_modules/@modelcontextprotocol/sdk/dist/esm');
  const { Client } = await import(pathToFileURL(join(base, 'client/index.js')).href);
  const { StreamableHTTPClientTransport } = await import(pathToFileURL(join(base, 'client/streamableHttp.js')).href);
  return { Client, StreamableHTTPClientTransport };
}

// ---------------------------------------------------------------------------------------------
// DevStream's recorded runs

export interface DevstreamRuns {
  files: string[];
  /** Each run's summary_ms, in file order. */
  runs: Array<Partial<Record<OpKey, OpSummary>>>;
  /** Per op and figure, the median over the runs; `conc_ok_ops_s` is each run's successful throughput. */
  median: Partial<Record<OpKey, Record<string, number>>>;
  meta: Array<{ started_at?: string; params?: unknown; host_at_start?: unknown }>;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Reads devstream-10k-run*.json from the harness folder and takes the median of each figure. */
export async function loadDevstreamRuns(dir = HARNESS_SOURCE): Promise<DevstreamRuns> {
  const files = (await readdir(dir)).filter((f) => /^devstream-10k-run\d+\.json$/.test(f)).sort();
  if (files.length === 0) throw new Error(`no devstream-10k-run*.json in ${dir}`);
  const parsed = await Promise.all(
    files.map(async (f) => JSON.parse(await readFile(join(dir, f), 'utf8')) as Record<string, any>),
  );
  const runs = parsed.map((p) => p.summary_ms as Partial<Record<OpKey, OpSummary>>);
  const result: DevstreamRuns['median'] = {};
  for (const op of OPS) {
    const perRun = runs.map((r) => r[op]).filter((s): s is OpSummary => s !== undefined);
    if (perRun.length === 0) continue;
    const keys = new Set(perRun.flatMap((s) => Object.keys(s)));
    keys.delete('conc_ok_ops_s');
    const m: Record<string, number> = {};
    for (const key of keys) {
      const values = perRun.map((s) => (s as unknown as Record<string, number>)[key]).filter((v) => v !== undefined);
      if (values.length) m[key] = median(values);
    }
    const ok = perRun.map(okOpsPerSecond).filter((v): v is number => v !== undefined);
    if (ok.length) m.conc_ok_ops_s = median(ok);
    result[op] = m;
  }
  return {
    files,
    runs,
    median: result,
    meta: parsed.map((p) => ({
      started_at: p.meta?.started_at,
      params: p.meta?.params,
      host_at_start: p.meta?.host_at_start,
    })),
  };
}

/** Disk use of a folder in bytes (`du -sk`), or null where du is not available. */
export async function diskUsage(dir: string): Promise<number | null> {
  try {
    const { stdout } = await run('du', ['-sk', dir]);
    const kib = Number(stdout.trim().split(/\s+/)[0]);
    return Number.isFinite(kib) ? kib * 1024 : null;
  } catch {
    return null;
  }
}
