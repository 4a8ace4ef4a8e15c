/**
 * Load and soak benchmark (`npm run bench:load`), on a throwaway Postgres cluster this process owns
 * (test/helpers/pg-cluster.ts) so that it can restart it:
 *
 *   A. steady: 40 MCP sessions (the real SDK client over Streamable HTTP) each looping a weighted mix
 *      of create/update/list tasks, store/search memory, find_symbols and resolve_context for 60 s:
 *      throughput, client-side p50/p95/p99 per tool, errors, the service's RSS every 5 s;
 *   B. REST: autocannon against three read routes (task list, memory search, symbol search), 20
 *      connections: req/s, p50/p95/p99, non-2xx, errors;
 *   C. fault: the same MCP mix for 60 s while Postgres is stopped once (at 1/3, for --outage s) and
 *      started again: errors by catalogue code during the outage, recovery time, then every write the
 *      service acknowledged (in A and C) checked in the database: lost writes must be 0.
 *
 * Embeddings come from a fake Ollama on loopback (deterministic 768-D vectors), so searches run the
 * hybrid path. Writes bench/results/load.{json,md} (other names for non-default runs, see --out).
 *
 *   npm run bench:load
 *   npm run bench:load -- --duration 20 --mode immediate --out load-immediate
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import autocannon from 'autocannon';
import pg from 'pg';
import { openDb } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { TASK_STATUSES, TASK_TYPES, CONTENT_TYPES, type TaskStatus } from '../src/db/schema.js';
import { FakeOllama } from '../support/fake-ollama.js';
import { clusterSupport, createCluster, type PgCluster } from '../support/pg-cluster.js';
import { createScratchDatabase } from '../support/postgres.js';
import { syntheticGraph } from './graphs.js';
import { gitInfo } from './lib/git.js';
import { startService, type ServiceProcess } from './lib/child.js';
import { machineCpuMs, processCpuMs } from './lib/cpu.js';
import { prng, seed, type SeededData } from './lib/seed.js';
import { rounded, summarize, type Summary } from './lib/stats.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

const USAGE = `Usage: npm run bench:load [-- options]

Load, soak and Postgres-restart benchmark of devstream-hub on a throwaway Postgres cluster
(needs the Postgres 15 + pgvector binaries, see test/helpers/pg-cluster.ts).

Options:
  --duration S      seconds of phase A (steady MCP load) and of phase C (fault), default 60
  --fault-duration S  seconds of phase C only (default: --duration)
  --rest S          seconds of phase B (autocannon), split over its three routes (default 21; shorter with --duration)
  --warmup S        unmeasured MCP load before phase A (default 5)
  --sessions N      concurrent MCP sessions (default 40)
  --connections N   autocannon connections (default 20)
  --mode M          how Postgres is stopped in phase C: fast | immediate (default fast)
  --restart-at S    when, into phase C (default: a third of it)
  --outage S        seconds Postgres stays down before it is started again (default 5; 0 = plain restart)
  --error-pause MS  a session's pause after a failed call, as a client's retry delay (default 100)
  --memories N      memories stored (through REST) before the load (default 1000)
  --nodes N         nodes of the synthetic code graph uploaded (default 3000)
  --out NAME        results file name in bench/results/ (default: load, or load-<A>s-<mode> for non-default runs)
  -h, --help        this text`;

// ------------------------------------------------------------------------------------------------
// Words the generated memories, queries and tasks are made of.

const TOPICS = [
  'session cache',
  'retry backoff',
  'rate limiter',
  'connection pool',
  'schema migration',
  'feature flag',
  'audit log',
  'token refresh',
  'search index',
  'payment webhook',
  'queue consumer',
  'circuit breaker',
  'tenant isolation',
  'blue green deploy',
  'read replica',
  'vector index',
  'embedding worker',
  'graceful shutdown',
  'health probe',
  'request tracing',
  'error budget',
  'load balancer',
  'sticky sessions',
  'cold start',
  'memory leak',
  'deadlock',
  'slow query',
  'cursor pagination',
  'idempotency key',
  'dead letter queue',
  'config reload',
  'secret rotation',
];
const CLAUSES = [
  'we decided to keep it behind a feature flag until the rollout review',
  'the root cause was an unbounded buffer growing under load',
  'postgres restarts must not lose acknowledged writes',
  'use exponential backoff with jitter and a ceiling of one minute',
  'the client retries on 503 but never on 400',
  'measure p95 before and after, on a quiet machine',
  'the index is rebuilt concurrently so writers never block',
  'documented the trade-off in the design notes',
  'tests cover empty input, unicode names and concurrent writers',
  'keep the public interface unchanged and migrate callers later',
  'the outage lasted four minutes and paged the on-call engineer',
  'split the change into three small pull requests',
];
const LOAD_PROJECTS = [
  'Load Alpha',
  'Load Beta',
  'Load Gamma',
  'Load Delta',
  'Load Epsilon',
  'Load Zeta',
  'Load Eta',
  'Load Theta',
];
const LOAD_PHASES = ['Design', 'Build', 'Verify', 'Release'];
const GRAPH_VERBS =
  'get set create update delete find load save parse render build resolve compute validate merge apply handle fetch send read write'.split(
    ' ',
  );
const GRAPH_NOUNS =
  'user order invoice session token cache query schema table index request response header payload message event queue worker job plan task memory graph node'.split(
    ' ',
  );
const INTENTS = ['pinpoint', 'reference-list', 'flow', 'overview', 'concept', 'security-audit', 'exploratory'] as const;

/** The mix each session loops over: tool → weight. */
const MIX: ReadonlyArray<readonly [ToolName, number]> = [
  ['devstream_create_task', 14],
  ['devstream_update_task', 14],
  ['devstream_list_tasks', 16],
  ['devstream_store_memory', 16],
  ['devstream_search_memory', 20],
  ['find_symbols', 10],
  ['resolve_context', 10],
];
type ToolName =
  | 'devstream_create_task'
  | 'devstream_update_task'
  | 'devstream_list_tasks'
  | 'devstream_store_memory'
  | 'devstream_search_memory'
  | 'find_symbols'
  | 'resolve_context';
const TOOLS = MIX.map(([t]) => t);

// ------------------------------------------------------------------------------------------------
// The ledger: every write the service acknowledged, and the writes whose outcome is unknown.

interface TaskEntry {
  id: string;
  phase: string;
  title: string;
  description: string;
  task_type: string;
  priority: number;
  project: string;
  phase_name: string;
  /** The last acknowledged status. */
  status: TaskStatus;
  /** Statuses sent after that, whose call failed: the write may or may not have happened. */
  uncertain: Set<TaskStatus>;
}

interface MemoryEntry {
  id: string;
  phase: string;
  content: string;
  content_type: string;
  keywords: string[];
  project: string;
  task_id: string | null;
}

class Ledger {
  readonly tasks = new Map<string, TaskEntry>();
  readonly memories = new Map<string, MemoryEntry>();
  /** Titles of creates that failed (were they committed anyway?). */
  readonly failedCreates: Array<{ phase: string; title: string }> = [];
  /** Contents of stores that failed. */
  readonly failedStores: Array<{ phase: string; content: string }> = [];
  /** Acknowledgements that contradict an earlier one (previous_status not what we last saw acknowledged). */
  readonly inconsistencies: string[] = [];
}

// ------------------------------------------------------------------------------------------------
// Call records.

interface CallEvent {
  tool: ToolName;
  /** ms since the phase began. */
  start: number;
  end: number;
  ok: boolean;
  code?: string;
}

class PhaseRecorder {
  readonly t0 = performance.now();
  readonly events: CallEvent[] = [];
  readonly examples = new Map<string, string>();
  now(): number {
    return performance.now() - this.t0;
  }
}

interface Slot {
  index: number;
  rand: () => number;
  seq: number;
  /** Tasks this slot created (acknowledged); only this slot updates them, one call at a time. */
  tasks: string[];
}

interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

interface World {
  service: ServiceProcess;
  seeded: SeededData;
  graphNames: string[];
  ledger: Ledger;
  /** ms a session waits after a failed call before its next one (a client's retry delay). */
  errorPauseMs: number;
  /** Set when the service process is found gone (Date.now()). */
  diedAt: number | null;
}

const pickFrom = <T>(rand: () => number, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;

function weighted<T>(rand: () => number, items: ReadonlyArray<readonly [T, number]>): T {
  const total = items.reduce((s, [, w]) => s + w, 0);
  let x = rand() * total;
  for (const [item, w] of items) {
    x -= w;
    if (x < 0) return item;
  }
  return items[items.length - 1]![0];
}

function memoryText(rand: () => number, tag: string): { content: string; keywords: string[] } {
  const topic = pickFrom(rand, TOPICS);
  const other = pickFrom(rand, TOPICS);
  const content = `${topic[0]!.toUpperCase()}${topic.slice(1)}: ${pickFrom(rand, CLAUSES)}; ${pickFrom(rand, CLAUSES)} (see ${other}, ref ${tag}).`;
  return { content, keywords: [...new Set([...topic.split(' ').slice(0, 2), tag.split('-')[0]!])] };
}

function queryText(rand: () => number): string {
  const topic = pickFrom(rand, TOPICS);
  return rand() < 0.5
    ? `how do we handle the ${topic}?`
    : `${topic} ${pickFrom(rand, CLAUSES).split(' ').slice(2, 5).join(' ')}`;
}

/** The catalogue code of a failed call: from an isError result's text, else what the client threw. */
function errorCode(error: unknown): { code: string; message: string } {
  if (error instanceof McpError) return { code: `MCP_${error.code}`, message: error.message };
  const e = error as { name?: string; code?: unknown; message?: string; cause?: { code?: string; message?: string } };
  if (typeof e?.code === 'number' && /Streamable HTTP error/.test(e.message ?? ''))
    return { code: `HTTP_${e.code}`, message: e.message ?? '' };
  if (e?.cause?.code) return { code: `NET_${e.cause.code}`, message: `${e.message}: ${e.cause.message ?? ''}` };
  return { code: 'CLIENT_ERROR', message: e?.message ?? String(error) };
}

async function connectSession(url: string): Promise<Session> {
  const client = new Client({ name: 'devstream-hub-bench-load', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url));
  await client.connect(transport);
  // As an agent does: the tool list first (the SDK then validates structuredContent against outputSchema).
  await client.listTools();
  return { client, transport };
}

async function closeSession(s: Session): Promise<void> {
  await s.transport.terminateSession().catch(() => {});
  await s.client.close().catch(() => {});
}

/** One tool call of the mix, recorded, and the ledger updated with what it acknowledged. */
async function oneCall(
  world: World,
  slot: Slot,
  session: Session,
  rec: PhaseRecorder,
  phase: string,
): Promise<boolean> {
  const { rand } = slot;
  let tool = weighted(rand, MIX);
  if (tool === 'devstream_update_task' && slot.tasks.length === 0) tool = 'devstream_create_task';
  const seq = slot.seq++;
  const tag = `s${slot.index}-${phase}${seq}`;
  let args: Record<string, unknown>;
  let onAck: (sc: any) => void = () => {};
  let onFail: () => void = () => {};
  switch (tool) {
    case 'devstream_create_task': {
      const title = `Load task ${tag} ${pickFrom(rand, TOPICS)}`;
      const a = {
        title,
        description: `${pickFrom(rand, CLAUSES)}. ${pickFrom(rand, CLAUSES)}.`,
        task_type: pickFrom(rand, TASK_TYPES),
        priority: 1 + Math.floor(rand() * 10),
        phase_name: pickFrom(rand, LOAD_PHASES),
        project: pickFrom(rand, LOAD_PROJECTS),
      };
      args = a;
      onAck = (sc) => {
        const id = sc.task.id as string;
        world.ledger.tasks.set(id, { id, phase, ...a, status: sc.task.status, uncertain: new Set() });
        slot.tasks.push(id);
      };
      onFail = () => world.ledger.failedCreates.push({ phase, title });
      break;
    }
    case 'devstream_update_task': {
      const id = pickFrom(rand, slot.tasks);
      const status = pickFrom(rand, TASK_STATUSES);
      const notes = rand() < 0.3 ? `load notes ${tag}: ${pickFrom(rand, CLAUSES)}` : undefined;
      args = { task_id: id, status, ...(notes ? { notes } : {}) };
      const entry = world.ledger.tasks.get(id)!;
      onAck = (sc) => {
        const prev = sc.previous_status as TaskStatus;
        if (prev !== entry.status && !entry.uncertain.has(prev)) {
          world.ledger.inconsistencies.push(
            `task ${id}: previous_status ${prev}, last acknowledged ${entry.status} (uncertain: ${[...entry.uncertain].join(',') || 'none'})`,
          );
        }
        entry.status = status;
        entry.uncertain.clear();
        if (notes && sc.memory_id) {
          world.ledger.memories.set(sc.memory_id, {
            id: sc.memory_id,
            phase,
            content: `Task status update: ${status}. Notes: ${notes}`,
            content_type: 'decision',
            keywords: ['task', 'update', status],
            project: entry.project,
            task_id: id,
          });
        }
      };
      onFail = () => entry.uncertain.add(status);
      break;
    }
    case 'devstream_list_tasks': {
      const project = rand() < 0.5 ? pickFrom(rand, LOAD_PROJECTS) : pickFrom(rand, world.seeded.plans).title;
      args = {
        project,
        limit: 20,
        ...(rand() < 0.3 ? { status: pickFrom(rand, TASK_STATUSES) } : {}),
        ...(rand() < 0.2 ? { priority: 6 } : {}),
      };
      break;
    }
    case 'devstream_store_memory': {
      const m = memoryText(rand, tag);
      const a = {
        content: m.content,
        content_type: pickFrom(rand, CONTENT_TYPES),
        keywords: m.keywords,
        project: pickFrom(rand, LOAD_PROJECTS),
      };
      args = a;
      onAck = (sc) => {
        world.ledger.memories.set(sc.memory_id, {
          id: sc.memory_id,
          phase,
          content: a.content,
          content_type: a.content_type,
          keywords: sc.keywords,
          project: a.project,
          task_id: null,
        });
      };
      onFail = () => world.ledger.failedStores.push({ phase, content: a.content });
      break;
    }
    case 'devstream_search_memory':
      args = { query: queryText(rand), limit: 10, ...(rand() < 0.5 ? { project: pickFrom(rand, LOAD_PROJECTS) } : {}) };
      break;
    case 'find_symbols':
      args = {
        query:
          rand() < 0.4
            ? pickFrom(rand, world.graphNames)
            : `${pickFrom(rand, GRAPH_VERBS)} ${pickFrom(rand, GRAPH_NOUNS)} ${pickFrom(rand, GRAPH_NOUNS)}`,
        repo: 'synthetic',
      };
      break;
    case 'resolve_context':
      args = {
        task: `how does ${pickFrom(rand, GRAPH_VERBS)} ${pickFrom(rand, GRAPH_NOUNS)} reach the ${pickFrom(rand, GRAPH_NOUNS)}`,
        intent: pickFrom(rand, INTENTS),
        repo: 'synthetic',
      };
      break;
  }

  const start = rec.now();
  let ok = false;
  let code: string | undefined;
  let message = '';
  try {
    const result = await session.client.callTool({ name: tool, arguments: args }, undefined, { timeout: 20_000 });
    if (result.isError) {
      const text = (result.content as Array<{ type: string; text?: string }>)[0]?.text ?? '';
      code = /^❌ Error [^:]*: ([A-Z_]+):/.exec(text)?.[1] ?? 'TOOL_ERROR';
      message = text;
    } else {
      ok = true;
      onAck(result.structuredContent);
    }
  } catch (error) {
    ({ code, message } = errorCode(error));
  }
  const end = rec.now();
  if (!ok) {
    onFail();
    if (!rec.examples.has(code!)) rec.examples.set(code!, `${tool}: ${message.slice(0, 300)}`);
  }
  rec.events.push({ tool, start, end, ok, ...(code ? { code } : {}) });
  return ok;
}

/** `sessions` MCP sessions looping the mix until `seconds` have passed; `during` runs alongside. */
async function runMcpPhase(
  world: World,
  slots: Slot[],
  phase: string,
  seconds: number,
  during?: (rec: PhaseRecorder) => Promise<void>,
): Promise<{ rec: PhaseRecorder; elapsedMs: number; connectMs: number; diedAtMs: number | null }> {
  const c0 = performance.now();
  const sessions = await Promise.all(slots.map(() => connectSession(world.service.url)));
  const connectMs = performance.now() - c0;
  const rec = new PhaseRecorder();
  const endAt = seconds * 1000;
  let diedAtMs: number | null = null;
  // A dead service ends the phase: its sessions are closed at once (in-flight calls fail now, not at their timeout).
  const watch = setInterval(() => {
    if (diedAtMs !== null || alive(world.service.pid)) return;
    diedAtMs = rec.now();
    world.diedAt = Date.now();
    for (const s of sessions) void s.client.close().catch(() => {});
  }, 100);
  try {
    const loops = slots.map(async (slot, i) => {
      while (rec.now() < endAt && diedAtMs === null) {
        const ok = await oneCall(world, slot, sessions[i]!, rec, phase);
        if (!ok && world.errorPauseMs > 0 && diedAtMs === null) await sleep(world.errorPauseMs);
      }
    });
    await Promise.all([...loops, during?.(rec)]);
  } finally {
    clearInterval(watch);
    await Promise.all(sessions.map(closeSession));
  }
  // Calls start until endAt (those in flight then finish after it): rates are over the window they started in.
  return { rec, elapsedMs: Math.min(rec.now(), endAt, diedAtMs ?? Infinity), connectMs, diedAtMs };
}

// ------------------------------------------------------------------------------------------------
// Samplers: the service's RSS and CPU, its Postgres connections, the client's event-loop delay.

async function rssOf(pid: number): Promise<{ rss: number; hwm: number } | null> {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
    return { rss: Math.round((kib('VmRSS') / 1024) * 10) / 10, hwm: Math.round((kib('VmHWM') / 1024) * 10) / 10 };
  } catch {
    return null;
  }
}

/** devstream_nodejs_heap_size_used_bytes from the service's /metrics, in MiB (null when it does not answer). */
async function heapOf(url: string): Promise<number | null> {
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
    const bytes = Number(/^devstream_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1]);
    return Number.isFinite(bytes) ? Math.round((bytes / 1024 / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

interface RssSample {
  t_s: number;
  phase: string;
  rss_mib: number | null;
  hwm_mib: number | null;
  /** V8 heap in use, from the service's own /metrics: a leak grows it, allocator slack only RSS. */
  heap_mib: number | null;
  pg_connections: number | null;
}

class Sampler {
  readonly samples: RssSample[] = [];
  phase = 'setup';
  #timer: NodeJS.Timeout | undefined;
  readonly #t0 = performance.now();
  constructor(
    private readonly pid: number,
    private readonly dbUrl: string,
    private readonly dbName: string,
    private readonly serviceUrl: string,
  ) {}
  async sample(): Promise<RssSample> {
    const m = await rssOf(this.pid);
    const heap = await heapOf(this.serviceUrl);
    let conns: number | null = null;
    const client = new pg.Client({ connectionString: this.dbUrl, connectionTimeoutMillis: 1_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where datname = $1 and application_name = 'devstream-hub'",
        [this.dbName],
      );
      conns = rows[0]?.n ?? null;
    } catch {
      /* Postgres down */
    } finally {
      await client.end().catch(() => {});
    }
    const s = {
      t_s: Math.round((performance.now() - this.#t0) / 100) / 10,
      phase: this.phase,
      rss_mib: m?.rss ?? null,
      hwm_mib: m?.hwm ?? null,
      heap_mib: heap,
      pg_connections: conns,
    };
    this.samples.push(s);
    return s;
  }
  start(everyMs = 5_000): void {
    this.#timer = setInterval(() => void this.sample(), everyMs);
  }
  stop(): void {
    clearInterval(this.#timer);
  }
}

/** The pids of the service's Postgres backends now (empty while Postgres is down). */
async function backendPids(dbUrl: string): Promise<number[]> {
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
async function cpuMeter(pid: number, dbUrl: string) {
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

// ------------------------------------------------------------------------------------------------
// Summaries.

const r1 = (x: number) => Math.round(x * 10) / 10;

/** Calls that started in [from, to), rates per second over `windowMs`. */
function summarizeCalls(rec: PhaseRecorder, windowMs: number, from = 0, to = Infinity) {
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
      per_s: r1(mine.length / (elapsedMs / 1000)),
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
    throughput_per_s: r1(events.length / (elapsedMs / 1000)),
    ok_per_s: r1(okAll.length / (elapsedMs / 1000)),
    latency_ms: okAll.length ? rounded(summarize(okAll)) : null,
    per_tool: perTool,
  };
}

function timeline(rec: PhaseRecorder, seconds: number): Array<{ s: number; ok: number; errors: number }> {
  const out = Array.from({ length: Math.ceil(seconds) + 1 }, (_, s) => ({ s, ok: 0, errors: 0 }));
  for (const e of rec.events) {
    const bucket = out[Math.min(out.length - 1, Math.floor(e.end / 1000))]!;
    if (e.ok) bucket.ok++;
    else bucket.errors++;
  }
  return out;
}

/**
 * RSS over a phase: growth from start to end, and — the verdict — growth after the first third
 * (heap and caches warm up first), against a noise band of max(16 MiB, 5 %).
 */
function rssVerdict(samples: RssSample[]) {
  const xs = samples.filter((s) => s.rss_mib !== null) as Array<RssSample & { rss_mib: number }>;
  if (xs.length < 2) return null;
  const slopeOf = (ys: typeof xs) => {
    const n = ys.length;
    if (n < 2) return 0;
    const mx = ys.reduce((s, x) => s + x.t_s, 0) / n;
    const my = ys.reduce((s, x) => s + x.rss_mib, 0) / n;
    const sxy = ys.reduce((s, x) => s + (x.t_s - mx) * (x.rss_mib - my), 0);
    const sxx = ys.reduce((s, x) => s + (x.t_s - mx) ** 2, 0);
    return sxx > 0 ? (sxy / sxx) * 60 : 0;
  };
  const start = xs[0]!.rss_mib;
  const end = xs[xs.length - 1]!.rss_mib;
  const settleAt = xs[0]!.t_s + (xs[xs.length - 1]!.t_s - xs[0]!.t_s) / 3;
  const settled = xs.filter((x) => x.t_s >= settleAt);
  const values = xs.map((x) => x.rss_mib);
  const noise = Math.max(16, 0.05 * start);
  const settledGrowth = end - settled[0]!.rss_mib;
  return {
    start_mib: start,
    end_mib: end,
    min_mib: Math.min(...values),
    max_mib: Math.max(...values),
    growth_mib: r1(end - start),
    settled_from_s: r1(settled[0]!.t_s - xs[0]!.t_s),
    settled_growth_mib: r1(settledGrowth),
    settled_slope_mib_per_min: r1(slopeOf(settled)),
    noise_band_mib: r1(noise),
    growth_beyond_noise: settledGrowth > noise,
  };
}

// ------------------------------------------------------------------------------------------------
// Phase B: autocannon.

interface RestRoute {
  key: string;
  label: string;
  setup: (rand: () => number) => { method: 'GET' | 'POST'; path: string; body?: string };
}

async function runAutocannon(url: string, route: RestRoute, seconds: number, connections: number) {
  const rand = prng(4242);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const first = route.setup(rand);
  let done!: (r: { err: unknown; result: autocannon.Result }) => void;
  const finished = new Promise<{ err: unknown; result: autocannon.Result }>((resolve) => (done = resolve));
  const instance = autocannon(
    {
      url,
      connections,
      duration: seconds,
      timeout: 30,
      method: first.method,
      requests: [
        {
          setupRequest: (request) => {
            const r = route.setup(rand);
            return {
              ...request,
              method: r.method,
              path: r.path,
              ...(r.body !== undefined
                ? { body: r.body, headers: { ...request.headers, 'content-type': 'application/json' } }
                : {}),
            };
          },
        },
      ],
    },
    (err, result) => done({ err, result }),
  );
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    latencies.push(responseTime);
    statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
  });
  const { err, result } = await finished;
  if (err) throw err;
  return {
    route: route.label,
    seconds: result.duration,
    connections,
    requests: result.requests.total,
    req_per_s: r1(result.requests.average),
    latency_ms: rounded(summarize(latencies)),
    autocannon_latency_ms: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p97_5: result.latency.p97_5,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    status_codes: statuses,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

// ------------------------------------------------------------------------------------------------
// Verification of the ledger against the database.

async function verifyLedger(dbUrl: string, service: ServiceProcess | null, ledger: Ledger) {
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  try {
    const taskIds = [...ledger.tasks.keys()];
    const { rows: taskRows } = await client.query<{
      id: string;
      title: string;
      description: string;
      task_type: string;
      priority: number;
      status: string;
      phase_name: string;
      project: string;
    }>(
      `select t.id, t.title, t.description, t.task_type, t.priority, t.status, ph.name as phase_name, p.title as project
         from micro_tasks t join phases ph on ph.id = t.phase_id join intervention_plans p on p.id = ph.plan_id
        where t.id = any($1)`,
      [taskIds],
    );
    const byId = new Map(taskRows.map((r) => [r.id, r]));
    const lostTasks: string[] = [];
    const wrongTasks: string[] = [];
    let statusUncertainResolved = 0;
    for (const t of ledger.tasks.values()) {
      const row = byId.get(t.id);
      if (!row) {
        lostTasks.push(`${t.id} (${t.phase}: ${t.title})`);
        continue;
      }
      const diffs: string[] = [];
      for (const k of ['title', 'description', 'task_type', 'priority', 'phase_name', 'project'] as const) {
        if (row[k] !== t[k]) diffs.push(`${k}: ${JSON.stringify(row[k])} ≠ ${JSON.stringify(t[k])}`);
      }
      if (row.status !== t.status) {
        if (t.uncertain.has(row.status as TaskStatus)) statusUncertainResolved++;
        else
          diffs.push(
            `status: ${row.status} ≠ acknowledged ${t.status}${t.uncertain.size ? ` (or unacknowledged ${[...t.uncertain].join('/')})` : ''}`,
          );
      }
      if (diffs.length) wrongTasks.push(`${t.id}: ${diffs.join('; ')}`);
    }

    const memIds = [...ledger.memories.keys()];
    const { rows: memRows } = await client.query<{
      id: string;
      content: string;
      content_type: string;
      keywords: string[];
      project: string | null;
      task_id: string | null;
      archived_at: Date | null;
      embedded: boolean;
    }>(
      `select m.id, m.content, m.content_type, m.keywords, p.title as project, m.task_id, m.archived_at, m.embedding is not null as embedded
         from semantic_memory m left join intervention_plans p on p.id = m.project_id
        where m.id = any($1)`,
      [memIds],
    );
    const memById = new Map(memRows.map((r) => [r.id, r]));
    const lostMemories: string[] = [];
    const wrongMemories: string[] = [];
    let notEmbedded = 0;
    for (const m of ledger.memories.values()) {
      const row = memById.get(m.id);
      if (!row || row.archived_at) {
        lostMemories.push(`${m.id} (${m.phase}: ${m.content.slice(0, 60)})`);
        continue;
      }
      if (!row.embedded) notEmbedded++;
      const diffs: string[] = [];
      if (row.content !== m.content) diffs.push('content');
      if (row.content_type !== m.content_type) diffs.push(`content_type ${row.content_type} ≠ ${m.content_type}`);
      if ([...row.keywords].sort().join(',') !== [...m.keywords].sort().join(','))
        diffs.push(`keywords ${row.keywords} ≠ ${m.keywords}`);
      if (row.project !== m.project) diffs.push(`project ${row.project} ≠ ${m.project}`);
      if (row.task_id !== m.task_id) diffs.push(`task_id ${row.task_id} ≠ ${m.task_id}`);
      if (diffs.length) wrongMemories.push(`${m.id}: ${diffs.join('; ')}`);
    }

    // Failed writes that were committed all the same (the answer was lost, not the write).
    const { rows: committedCreates } = await client.query<{ n: number }>(
      'select count(*)::int as n from micro_tasks where title = any($1)',
      [ledger.failedCreates.map((f) => f.title)],
    );
    const { rows: committedStores } = await client.query<{ n: number }>(
      'select count(*)::int as n from semantic_memory where content = any($1)',
      [ledger.failedStores.map((f) => f.content)],
    );

    // The same through the service (REST), for a sample: the service answers them after the outage.
    const sample = memIds.filter((_, i) => i % Math.max(1, Math.floor(memIds.length / 25)) === 0).slice(0, 25);
    let restOk = 0;
    const restFailures: string[] = [];
    for (const id of service ? sample : []) {
      const res = await fetch(`${service!.url}/api/v1/memories/${id}`);
      const body = (await res.json()) as any;
      if (res.status === 200 && body.memory?.content === ledger.memories.get(id)!.content) restOk++;
      else restFailures.push(`${id}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    }
    const taskSample = service ? taskIds.slice(-10) : [];
    for (const id of taskSample) {
      const t = ledger.tasks.get(id)!;
      const res = await fetch(`${service!.url}/api/v1/tasks?project=${encodeURIComponent(t.project)}&limit=500`);
      const body = (await res.json()) as any;
      if (res.status === 200) restOk++;
      else restFailures.push(`tasks?project=${t.project}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    }

    const byPhase = (m: Map<string, { phase: string }>) => {
      const out: Record<string, number> = {};
      for (const e of m.values()) out[e.phase] = (out[e.phase] ?? 0) + 1;
      return out;
    };
    return {
      acknowledged: {
        tasks_created: ledger.tasks.size,
        tasks_created_by_phase: byPhase(ledger.tasks),
        task_final_status_checked: ledger.tasks.size,
        memories: ledger.memories.size,
        memories_by_phase: byPhase(ledger.memories),
      },
      lost_writes: lostTasks.length + lostMemories.length + wrongTasks.length + wrongMemories.length,
      lost_tasks: lostTasks.slice(0, 20),
      wrong_tasks: wrongTasks.slice(0, 20),
      lost_memories: lostMemories.slice(0, 20),
      wrong_memories: wrongMemories.slice(0, 20),
      status_of_unacknowledged_update_applied: statusUncertainResolved,
      ack_inconsistencies: ledger.inconsistencies.slice(0, 20),
      ack_inconsistency_count: ledger.inconsistencies.length,
      failed_creates: ledger.failedCreates.length,
      failed_creates_committed_anyway: committedCreates[0]?.n ?? 0,
      failed_stores: ledger.failedStores.length,
      failed_stores_committed_anyway: committedStores[0]?.n ?? 0,
      memories_without_vector_yet: notEmbedded,
      rest_spot_checks: {
        ok: restOk,
        of: (service ? sample.length : 0) + taskSample.length,
        failures: restFailures.slice(0, 10),
      },
    };
  } finally {
    await client.end();
  }
}

// ------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '60' },
      'fault-duration': { type: 'string' },
      rest: { type: 'string' },
      warmup: { type: 'string', default: '5' },
      sessions: { type: 'string', default: '40' },
      connections: { type: 'string', default: '20' },
      mode: { type: 'string', default: 'fast' },
      'restart-at': { type: 'string' },
      outage: { type: 'string', default: '5' },
      'error-pause': { type: 'string', default: '100' },
      memories: { type: 'string', default: '1000' },
      nodes: { type: 'string', default: '3000' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const num = (name: string, v: string | undefined, min: number) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number ≥ ${min} (got ${v})`);
    return n;
  };
  const steadyS = num('duration', values.duration, 3);
  const faultS = num('fault-duration', values['fault-duration'] ?? values.duration, 6);
  const restS = num('rest', values.rest ?? String(Math.min(21, Math.max(6, Math.round(steadyS * 0.35)))), 3);
  const warmupS = num('warmup', values.warmup, 0);
  const sessionCount = num('sessions', values.sessions, 1);
  const connections = num('connections', values.connections, 1);
  const restartAtS = num('restart-at', values['restart-at'] ?? String(Math.round(faultS / 3)), 0);
  const outageS = num('outage', values.outage, 0);
  const errorPauseMs = num('error-pause', values['error-pause'], 0);
  const memoryCount = num('memories', values.memories, 0);
  const nodeCount = num('nodes', values.nodes, 100);
  const mode = values.mode as 'fast' | 'immediate';
  if (mode !== 'fast' && mode !== 'immediate') throw new Error('--mode must be fast or immediate');
  const defaults =
    steadyS === 60 && faultS === 60 && mode === 'fast' && sessionCount === 40 && outageS === 5 && errorPauseMs === 100;
  const outName = values.out ?? (defaults ? 'load' : `load-${steadyS}s-${mode}`);

  const unsupported = clusterSupport();
  if (unsupported) {
    console.error(`bench:load needs a throwaway Postgres cluster: ${unsupported}`);
    return 2;
  }

  const log = (msg: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);
  const serviceLines: Array<{ t: string; phase: string; line: string }> = [];
  let currentPhase = 'setup';

  log('creating a throwaway Postgres cluster');
  const cluster: PgCluster = await createCluster();
  const fake = await new FakeOllama().start();
  fake.dense = true;
  let service: ServiceProcess | undefined;
  let sampler: Sampler | undefined;
  try {
    const scratch = await createScratchDatabase(cluster.url, 'dsh_load');
    const pgVersion = await (async () => {
      const c = new pg.Client({ connectionString: scratch.url });
      await c.connect();
      try {
        return (await c.query<{ v: string }>('select version() as v')).rows[0]!.v;
      } finally {
        await c.end();
      }
    })();
    log(`cluster on port ${cluster.port}, database ${scratch.name}; ${pgVersion.split(' on ')[0]}`);

    // Migrate and seed tasks directly (as bench:tasks does): 20 projects × 5 phases × 20 tasks.
    const db = await openDb({ databaseUrl: scratch.url });
    await migrate(db.kysely);
    const seeded = await seed(db.kysely, { projects: 20, phasesPerProject: 5, tasksPerPhase: 20 });
    await db.close();
    log(`seeded ${seeded.counts.plans} projects, ${seeded.counts.tasks} tasks`);

    service = await startService({
      cwd: ROOT,
      env: {
        DATABASE_URL: scratch.url,
        LOG_LEVEL: 'warn',
        EMBEDDING_PROVIDER: 'ollama',
        OLLAMA_HOST: fake.url,
        OLLAMA_EMBEDDING_MODEL: 'nomic-embed-text',
        MAX_SESSIONS: '10000',
      },
      onLine: (line) => {
        serviceLines.push({ t: new Date().toISOString(), phase: currentPhase, line });
        if (serviceLines.length <= 30) console.log(`  [service] ${line.slice(0, 400)}`);
      },
    });
    const svc = service;
    log(`service pid ${svc.pid} at ${svc.url}`);
    sampler = new Sampler(svc.pid, scratch.url, scratch.name, svc.url);
    const rssBaseline = await sampler.sample();

    // A synthetic code graph for find_symbols / resolve_context.
    const graphText = syntheticGraph(nodeCount, 7);
    const graph = JSON.parse(graphText) as { nodes: Array<{ id: string; name: string; type: string }> };
    const graphNames = graph.nodes.filter((n) => n.type !== 'FILE').map((n) => n.name.split('.').pop()!);
    const up = await fetch(`${svc.url}/api/v1/graphs?repo=synthetic`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(graphText),
    });
    const upBody = (await up.json()) as any;
    if (up.status !== 201) throw new Error(`graph upload: ${up.status} ${JSON.stringify(upBody)}`);
    log(`uploaded synthetic graph: ${upBody.nodes} nodes, ${upBody.edges} edges`);

    // Memories through the service (embedded by the fake Ollama), 16 at a time.
    const seedRand = prng(99);
    let stored = 0;
    const storeOne = async (i: number) => {
      const m = memoryText(seedRand, `seed${i}`);
      const res = await fetch(`${svc.url}/api/v1/memories`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          content: m.content,
          content_type: pickFrom(seedRand, CONTENT_TYPES),
          keywords: m.keywords,
          project: pickFrom(seedRand, LOAD_PROJECTS),
        }),
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`seeding memory ${i}: ${res.status}`);
      stored++;
    };
    for (let i = 0; i < memoryCount; i += 16)
      await Promise.all(Array.from({ length: Math.min(16, memoryCount - i) }, (_, k) => storeOne(i + k)));
    log(`stored ${stored} memories through REST`);

    const world: World = { service: svc, seeded, graphNames, ledger: new Ledger(), errorPauseMs, diedAt: null };
    const slots: Slot[] = Array.from({ length: sessionCount }, (_, i) => ({
      index: i,
      rand: prng(1000 + i),
      seq: 0,
      tasks: [],
    }));
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    const delaySummary = () => ({
      p50_ms: r1(loopDelay.percentile(50) / 1e6),
      p99_ms: r1(loopDelay.percentile(99) / 1e6),
      max_ms: r1(loopDelay.max / 1e6),
    });

    // Warm-up (not measured; its writes are in the ledger all the same).
    if (warmupS > 0) {
      currentPhase = sampler.phase = 'warmup';
      log(`warm-up: ${sessionCount} MCP sessions for ${warmupS} s`);
      await runMcpPhase(world, slots, 'w', warmupS);
    }

    // ---- Phase A: steady MCP load.
    currentPhase = sampler.phase = 'A';
    log(`phase A: ${sessionCount} MCP sessions, ${steadyS} s`);
    const rssA0 = await sampler.sample();
    sampler.start(5_000);
    loopDelay.enable();
    const cpuA = await cpuMeter(svc.pid, scratch.url);
    const a = await runMcpPhase(world, slots, 'a', steadyS);
    const cpuAFig = await cpuA(a.rec.events.length);
    loopDelay.disable();
    const delayA = delaySummary();
    loopDelay.reset();
    sampler.stop();
    const rssA1 = await sampler.sample();
    const rssASamples = sampler.samples.filter((s) => s.phase === 'A');
    const phaseA = {
      seconds: steadyS,
      sessions: sessionCount,
      session_connect_ms: Math.round(a.connectMs),
      ...summarizeCalls(a.rec, a.elapsedMs),
      error_examples: Object.fromEntries(a.rec.examples),
      cpu: cpuAFig,
      client_event_loop_delay: delayA,
      rss: { ...rssVerdict(rssASamples), samples: rssASamples.map((s) => [s.t_s, s.rss_mib]) },
      heap_mib: rssASamples.map((s) => [s.t_s, s.heap_mib]),
    };
    log(
      `phase A: ${phaseA.calls} calls (${phaseA.throughput_per_s}/s), ${phaseA.errors} errors, p50/p95/p99 ${phaseA.latency_ms?.p50.toFixed(1)}/${phaseA.latency_ms?.p95.toFixed(1)}/${phaseA.latency_ms?.p99.toFixed(1)} ms; ` +
        `RSS ${rssA0.rss_mib} → ${rssA1.rss_mib} MiB`,
    );
    if (!alive(svc.pid)) throw new Error(`the service exited during phase A\n${svc.output()}`);

    // ---- Phase B: REST with autocannon.
    currentPhase = sampler.phase = 'B';
    const routes: RestRoute[] = [
      {
        key: 'list_tasks',
        label: 'GET /api/v1/tasks?project=…&limit=20',
        setup: (rand) => ({
          method: 'GET',
          path: `/api/v1/tasks?project=${encodeURIComponent(rand() < 0.5 ? pickFrom(rand, LOAD_PROJECTS) : pickFrom(rand, seeded.plans).title)}&limit=20`,
        }),
      },
      {
        key: 'search_memory',
        label: 'POST /api/v1/memories/search',
        setup: (rand) => ({
          method: 'POST',
          path: '/api/v1/memories/search',
          body: JSON.stringify({
            query: queryText(rand),
            limit: 10,
            ...(rand() < 0.5 ? { project: pickFrom(rand, LOAD_PROJECTS) } : {}),
          }),
        }),
      },
      {
        key: 'find_symbols',
        label: 'GET /api/v1/symbols?q=…&repo=synthetic',
        setup: (rand) => ({
          method: 'GET',
          path: `/api/v1/symbols?q=${encodeURIComponent(rand() < 0.4 ? pickFrom(rand, graphNames) : `${pickFrom(rand, GRAPH_VERBS)} ${pickFrom(rand, GRAPH_NOUNS)}`)}&repo=synthetic`,
        }),
      },
    ];
    const perRoute = Math.max(2, Math.round(restS / routes.length));
    log(`phase B: autocannon, ${connections} connections, ${perRoute} s per route`);
    sampler.start(5_000);
    const cpuB = await cpuMeter(svc.pid, scratch.url);
    const phaseBRoutes: Record<string, Awaited<ReturnType<typeof runAutocannon>>> = {};
    for (const route of routes) {
      const res = await runAutocannon(svc.url, route, perRoute, connections);
      phaseBRoutes[route.key] = res;
      log(
        `  ${route.label}: ${res.req_per_s} req/s, p50/p95/p99 ${res.latency_ms.p50.toFixed(1)}/${res.latency_ms.p95.toFixed(1)}/${res.latency_ms.p99.toFixed(1)} ms, non-2xx ${res.non2xx}, errors ${res.errors}`,
      );
    }
    const cpuBFig = await cpuB(Object.values(phaseBRoutes).reduce((n, r) => n + r.requests, 0));
    sampler.stop();
    const rssB1 = await sampler.sample();
    if (!alive(svc.pid)) throw new Error(`the service exited during phase B\n${svc.output()}`);

    // ---- Phase C: MCP load while Postgres restarts.
    currentPhase = sampler.phase = 'C';
    log(
      `phase C: ${sessionCount} MCP sessions, ${faultS} s; Postgres stopped (${mode}) at ${restartAtS} s for ${outageS} s`,
    );
    const marks: Record<string, number> = {};
    const readiness: Array<{ t: number; status: number | string }> = [];
    const restProbes: Array<{ t: number; status: number | string; code: string | null }> = [];
    let stopReady = false;
    sampler.start(5_000);
    const cpuC = await cpuMeter(svc.pid, scratch.url);
    const c = await runMcpPhase(world, slots, 'c', faultS, async (rec) => {
      const probe = (async () => {
        while (!stopReady && world.diedAt === null && rec.now() < faultS * 1000 + 2_000) {
          const t = rec.now();
          let status: number | string;
          try {
            const res = await fetch(`${svc.url}/readyz`, { signal: AbortSignal.timeout(5_000) });
            await res.arrayBuffer();
            status = res.status;
          } catch (error) {
            status = errorCode(error).code;
          }
          readiness.push({ t: Math.round(t), status });
          // And a REST read: its HTTP status and catalogue code while the database is gone.
          try {
            const res = await fetch(`${svc.url}/api/v1/tasks?limit=1`, { signal: AbortSignal.timeout(10_000) });
            const body = (await res.json().catch(() => null)) as { error?: { code?: string } } | null;
            restProbes.push({ t: Math.round(t), status: res.status, code: body?.error?.code ?? null });
          } catch (error) {
            restProbes.push({ t: Math.round(t), status: errorCode(error).code, code: null });
          }
          await sleep(250);
        }
      })();
      await sleep(Math.max(0, restartAtS * 1000 - rec.now()));
      marks.stop_begin = rec.now();
      log(`  stopping Postgres (${mode})`);
      await cluster.stop(mode);
      marks.stopped = rec.now();
      log(`  Postgres stopped after ${Math.round(marks.stopped - marks.stop_begin)} ms`);
      await sleep(outageS * 1000);
      marks.start_begin = rec.now();
      await cluster.start();
      marks.up = rec.now();
      log(
        `  Postgres accepting connections again after ${Math.round(marks.up - marks.start_begin)} ms (down ${Math.round(marks.up - marks.stopped)} ms)`,
      );
      while (rec.now() < faultS * 1000 && world.diedAt === null)
        await sleep(Math.min(200, Math.max(1, faultS * 1000 - rec.now())));
      stopReady = true;
      await probe;
    });
    const cpuCFig = await cpuC(c.rec.events.length);
    sampler.stop();
    const rssC1 = await sampler.sample();
    const serviceAlive = alive(svc.pid);

    const ev = c.rec.events;
    const failed = ev.filter((e) => !e.ok);
    const firstError = failed.length ? Math.min(...failed.map((e) => e.end)) : null;
    const lastError = failed.length ? Math.max(...failed.map((e) => e.end)) : null;
    const okAfterUp = ev.filter((e) => e.ok && e.end >= marks.up!);
    const firstSuccessAfterUp = okAfterUp.length ? Math.min(...okAfterUp.map((e) => e.end)) : null;
    const failedStartedAfterUp = failed.filter((e) => e.start >= marks.up!);
    const errorsByTool: Record<string, number> = {};
    for (const e of failed) errorsByTool[e.tool] = (errorsByTool[e.tool] ?? 0) + 1;
    const notReady = readiness.filter((r) => r.status !== 200);
    const readyAgain = readiness.find((r) => r.t >= (marks.up ?? Infinity) && r.status === 200);
    const outage = {
      mode,
      outage_held_s: outageS,
      marks_ms: Object.fromEntries(Object.entries(marks).map(([k, v]) => [k, Math.round(v)])),
      postgres_down_ms:
        marks.up !== undefined && marks.stopped !== undefined ? Math.round(marks.up - marks.stop_begin!) : null,
      errors_total: failed.length,
      errors_by_code: Object.fromEntries(
        Object.entries(
          failed.reduce<Record<string, number>>((m, e) => ((m[e.code!] = (m[e.code!] ?? 0) + 1), m), {}),
        ).sort((x, y) => y[1] - x[1]),
      ),
      errors_by_tool: errorsByTool,
      errors_before_stop: failed.filter((e) => e.end < marks.stop_begin!).length,
      errors_while_down: failed.filter((e) => e.end >= marks.stop_begin! && e.end < marks.up!).length,
      errors_after_up: failed.filter((e) => e.end >= marks.up!).length,
      calls_started_after_up_that_failed: failedStartedAfterUp.length,
      ok_while_down: ev.filter((e) => e.ok && e.end >= marks.stopped! && e.end < marks.start_begin!).length,
      error_latency_ms: failed.length ? rounded(summarize(failed.map((e) => e.end - e.start))) : null,
      first_error_ms: firstError && Math.round(firstError),
      last_error_ms: lastError && Math.round(lastError),
      first_success_after_up_ms: firstSuccessAfterUp && Math.round(firstSuccessAfterUp),
      /** First error to first success once Postgres is back. */
      recovery_ms:
        firstError !== null && firstSuccessAfterUp !== null ? Math.round(firstSuccessAfterUp - firstError) : null,
      /** Postgres accepting connections again → first successful call. */
      up_to_first_success_ms: firstSuccessAfterUp !== null ? Math.round(firstSuccessAfterUp - marks.up!) : null,
      /** Postgres back → the last failure (0: none after it was back). */
      up_to_last_error_ms: lastError !== null && lastError > marks.up! ? Math.round(lastError - marks.up!) : 0,
      readyz_not_ready_probes: notReady.length,
      readyz_first_not_ready_ms: notReady[0]?.t ?? null,
      readyz_statuses_seen: [...new Set(readiness.map((r) => String(r.status)))],
      readyz_ready_again_after_up_ms: readyAgain ? Math.round(readyAgain.t - marks.up!) : null,
      /** GET /api/v1/tasks?limit=1 every ~250 ms: "status code" → probes. */
      rest_probe_answers: restProbes.reduce<Record<string, number>>((m, p) => {
        const k = `${p.status}${p.code ? ` ${p.code}` : ''}`;
        m[k] = (m[k] ?? 0) + 1;
        return m;
      }, {}),
      error_examples: Object.fromEntries(c.rec.examples),
    };
    const phaseC = {
      seconds: faultS,
      sessions: sessionCount,
      ...summarizeCalls(c.rec, c.elapsedMs),
      before_stop: summarizeCalls(c.rec, marks.stop_begin!, 0, marks.stop_begin!),
      after_recovery: (() => {
        const from = (lastError ?? marks.up!) + 1;
        const span = c.elapsedMs - from; // up to the end of the phase
        return span > 2_000 ? { from_ms: Math.round(from), ...summarizeCalls(c.rec, span, from) } : null;
      })(),
      outage,
      timeline: timeline(c.rec, c.rec.events.reduce((m, e) => Math.max(m, e.end), 0) / 1000),
      cpu: cpuCFig,
      service_alive_after: serviceAlive,
      service_died_at_ms: c.diedAtMs === null ? null : Math.round(c.diedAtMs),
      service_exit_output: serviceAlive ? null : svc.output(),
    };
    log(
      `phase C: ${phaseC.calls} calls, ${outage.errors_total} errors ${JSON.stringify(outage.errors_by_code)}; ` +
        `recovery ${outage.recovery_ms} ms (Postgres up → first success ${outage.up_to_first_success_ms} ms; last error ${outage.up_to_last_error_ms} ms after up)`,
    );
    if (!serviceAlive) log(`the service EXITED during phase C. Output:\n${svc.output()}`);

    // ---- Verification of every acknowledged write.
    currentPhase = 'verify';
    // Give the embedding worker a moment to catch up on what the outage queued.
    if (serviceAlive) await sleep(3_000);
    const verification: Awaited<ReturnType<typeof verifyLedger>> | { error: string } = await verifyLedger(
      scratch.url,
      serviceAlive ? svc : null,
      world.ledger,
    ).catch((error: unknown) => ({ error: String((error as Error).stack ?? error) }));
    if ('lost_writes' in verification) {
      log(
        `verify: ${verification.acknowledged.tasks_created} tasks and ${verification.acknowledged.memories} memories acknowledged; lost or wrong: ${verification.lost_writes}; ` +
          `failed writes committed anyway: ${verification.failed_creates_committed_anyway}/${verification.failed_creates} creates, ${verification.failed_stores_committed_anyway}/${verification.failed_stores} stores`,
      );
    } else log(`verify: ${verification.error}`);
    const ready = await fetch(`${svc.url}/readyz`)
      .then((r) => r.status)
      .catch((e: unknown) => errorCode(e).code);

    const allSamples = sampler.samples;
    const serviceLog = {
      lines: serviceLines.length,
      by_phase: serviceLines.reduce<Record<string, number>>((m, l) => ((m[l.phase] = (m[l.phase] ?? 0) + 1), m), {}),
      first: serviceLines.slice(0, 15).map((l) => `${l.phase} ${l.line.slice(0, 600)}`),
      distinct_messages: summarizeLogMessages(serviceLines),
    };

    const results = {
      benchmark: 'devstream-hub load',
      date: new Date().toISOString(),
      git: gitInfo(ROOT, { short: true, paths: ['src'] }),
      machine: {
        cpus: os.cpus().length,
        cpu_model: os.cpus()[0]?.model ?? 'unknown',
        total_memory_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
        platform: `${os.platform()} ${os.release()} ${os.arch()}`,
        node: process.version,
        load_average_end: os.loadavg().map((x) => Math.round(x * 100) / 100),
      },
      database_server: pgVersion,
      setup: {
        postgres: 'throwaway cluster (fsync=off, max_connections=200), scratch database',
        embeddings: 'fake Ollama on loopback (768-D deterministic vectors): hybrid search',
        seeded: { ...seeded.counts, memories: stored, graph_nodes: upBody.nodes, graph_edges: upBody.edges },
        mix: Object.fromEntries(MIX),
        options: {
          steadyS,
          faultS,
          restS,
          warmupS,
          sessionCount,
          connections,
          mode,
          restartAtS,
          outageS,
          errorPauseMs,
        },
      },
      rss_mib: {
        baseline_after_start: rssBaseline.rss_mib,
        phase_a_start: rssA0.rss_mib,
        phase_a_end: rssA1.rss_mib,
        phase_b_end: rssB1.rss_mib,
        phase_c_end: rssC1.rss_mib,
        peak_hwm: Math.max(...allSamples.map((s) => s.hwm_mib ?? 0)),
        samples: allSamples,
      },
      phase_a: phaseA,
      phase_b: { cpu: cpuBFig, routes: phaseBRoutes },
      phase_c: phaseC,
      verification,
      readyz_at_end: ready,
      service_log: serviceLog,
    };
    await mkdir(RESULTS_DIR, { recursive: true });
    await writeFile(`${RESULTS_DIR}${outName}.json`, JSON.stringify(results, null, 2) + '\n');
    const md = markdown(results);
    await writeFile(`${RESULTS_DIR}${outName}.md`, md);
    console.log(`\n${md}`);
    log(`wrote bench/results/${outName}.json and .md`);
    const lost = 'lost_writes' in verification ? verification.lost_writes : null;
    return serviceAlive && lost === 0 ? 0 : 1;
  } finally {
    sampler?.stop();
    await service?.stop();
    await fake.stop();
    await cluster.destroy();
  }
}

/** Service log lines grouped by their msg (pino JSON), with counts. */
function summarizeLogMessages(
  lines: Array<{ phase: string; line: string }>,
): Array<{ msg: string; count: number; phases: string[] }> {
  const groups = new Map<string, { count: number; phases: Set<string> }>();
  for (const { phase, line } of lines) {
    let msg = line.slice(0, 160);
    try {
      const j = JSON.parse(line) as { msg?: string; level?: number; err?: { message?: string; code?: string } };
      msg = `[${j.level ?? '?'}] ${j.msg ?? ''}${j.err ? ` — ${j.err.code ?? ''} ${j.err.message ?? ''}`.slice(0, 200) : ''}`;
    } catch {
      /* not JSON */
    }
    const g = groups.get(msg) ?? { count: 0, phases: new Set<string>() };
    g.count++;
    g.phases.add(phase);
    groups.set(msg, g);
  }
  return [...groups]
    .map(([msg, g]) => ({ msg, count: g.count, phases: [...g.phases] }))
    .sort((x, y) => y.count - x.count)
    .slice(0, 25);
}

function markdown(r: any): string {
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

function chunk<T>(xs: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

if (process.argv[1]?.endsWith('load.ts')) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
