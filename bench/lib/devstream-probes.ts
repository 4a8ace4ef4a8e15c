/**
 * The per-call breakdown of `npm run bench:devstream`, taken after the harness run on the same seeded
 * service, one call at a time:
 *
 *   - MCP `ping` over the harness's own transport (SDK 1.32 client, 2025-era Streamable HTTP session):
 *     the floor every MCP call pays (HTTP, the SDK on both sides, session handling, auth);
 *   - the same 7 ops over REST (/api/v1), with the harness's argument generators, client-observed and
 *     by the service's `Server-Timing` (`op`: validation + SQL + mapping inside the service; `embed`);
 *   - on Postgres, what pg_stat_statements saw during each REST series: the statements the service ran
 *     and their execution time per call of the op (planning not included);
 *   - on Postgres, search_memory over MCP again with pg_stat_statements around those same calls: the
 *     service's time against its own statement's, paired (the "≤ 1.3× its SQL" target);
 *   - the CPU each series took, per call and process (the client here, the service, Postgres's
 *     backends, the embedder): on two CPUs a call cannot take less wall time than half their sum.
 *
 * So, per op: MCP − op ≈ transport + MCP SDK + auth; op − embed − SQL ≈ the service's own code.
 */
import pg from 'pg';
import type { CpuMeter, CpuPerCall } from './cpu.js';
import { timingPart } from './memory-service.js';
import { rounded, summarize, type Summary } from './stats.js';
import { loadHarnessSdk, OPS, type OpKey, type Workload } from './devstream-harness.js';

export interface ProbeSizes {
  warmup: number;
  iters: number;
}

export interface PingResult {
  latency_ms: Summary;
  /** CPU a ping, by process (null when not measured). */
  cpu_ms_per_call: CpuPerCall | null;
  /** The protocol revision the SDK 1.32 client and the service agreed on. */
  protocol_version: string | null;
  session: boolean;
}

/** `client.ping()` round trips over a fresh SDK 1.32 session to `mcpUrl`. */
export async function probePing(
  cacheDir: string,
  mcpUrl: string,
  sizes: ProbeSizes,
  cpu?: CpuMeter,
): Promise<PingResult> {
  const { Client, StreamableHTTPClientTransport } = await loadHarnessSdk(cacheDir);
  const client = new Client({ name: 'devstream-hub-bench-ping', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl));
  await client.connect(transport);
  try {
    for (let i = 0; i < sizes.warmup; i++) await client.ping();
    const samples: number[] = [];
    await cpu?.start();
    for (let i = 0; i < sizes.iters; i++) {
      const t0 = performance.now();
      await client.ping();
      samples.push(performance.now() - t0);
    }
    const cpuPerCall = cpu ? await cpu.stop(sizes.iters) : null;
    return {
      latency_ms: rounded(summarize(samples)),
      cpu_ms_per_call: cpuPerCall,
      protocol_version: (transport.protocolVersion as string | undefined) ?? null,
      session: typeof transport.sessionId === 'string',
    };
  } finally {
    // An open session would hold the service's graceful shutdown.
    await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  }
}

export interface SearchPairResult {
  n: number;
  errors: number;
  /** Client-observed over MCP (the harness's SDK 1.32 client and transport), the harness's arguments. */
  mcp_ms: Summary;
  /** The statements these same calls ran (pg_stat_statements during the series). */
  sql: SqlPerCall;
  /**
   * The search's own SQL a call: the statements run at least once per 4 calls (the hybrid search),
   * without the occasional ones (background work: the access counts' batch, the embedding worker).
   */
  own_sql_ms_per_call: number;
  /** The same statements' planning a call (null when planning is not tracked). */
  own_plan_ms_per_call: number | null;
  /** mcp_ms.mean ÷ own_sql_ms_per_call: the service against its own SQL's execution, over the same calls. */
  ratio: number;
  /** mcp_ms.mean ÷ (own_sql_ms_per_call + own_plan_ms_per_call): against its SQL planned and run. */
  ratio_with_planning: number | null;
  /** CPU a search, by process (null when not measured): what two CPUs must fit into the wall time. */
  cpu_ms_per_call: CpuPerCall | null;
}

/**
 * search_memory over MCP with pg_stat_statements around the same calls: the service's time and its
 * statement's, paired (the REST series measures its SQL on other calls than the harness's MCP series,
 * and a series' p50 set against another's mean is no ratio). `first` is where in the harness's query
 * pool to start (after what the harness and the REST series took).
 */
export async function probeSearchPair(options: {
  cacheDir: string;
  mcpUrl: string;
  workload: Workload;
  first: number;
  sizes: ProbeSizes;
  stats: StatementStats;
  cpu?: CpuMeter;
}): Promise<SearchPairResult> {
  const { sizes, stats, workload } = options;
  const { Client, StreamableHTTPClientTransport } = await loadHarnessSdk(options.cacheDir);
  const client = new Client({ name: 'devstream-hub-bench-search', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(options.mcpUrl));
  await client.connect(transport);
  let i = options.first;
  const call = async () => {
    const args = { query: workload.queries[i++ % workload.queries.length]!, limit: 10 };
    const t0 = performance.now();
    const result = await client.callTool({ name: 'devstream_search_memory', arguments: args });
    return { ms: performance.now() - t0, ok: !result.isError };
  };
  try {
    for (let w = 0; w < sizes.warmup; w++) await call();
    await stats.reset();
    await options.cpu?.start();
    const samples: number[] = [];
    let errors = 0;
    for (let n = 0; n < sizes.iters; n++) {
      const r = await call();
      if (r.ok) samples.push(r.ms);
      else errors++;
    }
    const cpuPerCall = options.cpu ? await options.cpu.stop(sizes.iters) : null;
    const sql = await stats.read(sizes.iters);
    const mcp = summarize(samples);
    const own = sql.sql_ms_per_call - sql.occasional_ms_per_call;
    const plan = sql.plan_ms_per_call === null ? null : sql.plan_ms_per_call - (sql.occasional_plan_ms_per_call ?? 0);
    return {
      n: sizes.iters,
      errors,
      mcp_ms: rounded(mcp),
      sql,
      own_sql_ms_per_call: Math.round(own * 1000) / 1000,
      own_plan_ms_per_call: plan === null ? null : Math.round(plan * 1000) / 1000,
      ratio: Math.round((mcp.mean / own) * 100) / 100,
      ratio_with_planning: plan === null ? null : Math.round((mcp.mean / (own + plan)) * 100) / 100,
      cpu_ms_per_call: cpuPerCall,
    };
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------
// REST

interface RestCall {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  body?: unknown;
  expect: number;
}

/** The REST route of each op, and its arguments drawn from the harness's pools. */
const ROUTES: Record<OpKey, string> = {
  list_plans: 'GET /api/v1/plans',
  list_tasks_nofilter: 'GET /api/v1/tasks',
  list_tasks_status_priority: 'GET /api/v1/tasks?status=…&priority=…',
  search_memory: 'POST /api/v1/memories/search',
  create_task: 'POST /api/v1/tasks',
  update_task: 'PATCH /api/v1/tasks/{id}',
  store_memory: 'POST /api/v1/memories',
};

/**
 * Argument generators over the harness's pools, each starting where the harness's own cursor stopped
 * (`consumed` calls in), so store_memory stores new content (identical content is stored once) and
 * update_task continues the harness's sequence of status changes.
 */
function restCalls(workload: Workload, taskIds: Array<string | null>, consumed: number): Record<OpKey, () => RestCall> {
  const cursor = <T>(pool: T[]) => {
    let i = consumed;
    return () => pool[i++ % pool.length]!;
  };
  const filters = cursor(workload.bench.listTaskFilters);
  const queries = cursor(workload.queries);
  const creates = cursor(workload.bench.createTasks);
  const updates = cursor(workload.bench.updateOps);
  const stores = cursor(workload.bench.storeMemories);
  const validIds = taskIds.filter((id): id is string => Boolean(id));
  const idFor = (index: number) => taskIds[index] ?? validIds[index % Math.max(1, validIds.length)];
  return {
    list_plans: () => ({ method: 'GET', path: '/api/v1/plans', expect: 200 }),
    list_tasks_nofilter: () => ({ method: 'GET', path: '/api/v1/tasks', expect: 200 }),
    list_tasks_status_priority: () => {
      const f = filters();
      return { method: 'GET', path: `/api/v1/tasks?status=${f.status}&priority=${f.priority}`, expect: 200 };
    },
    search_memory: () => ({
      method: 'POST',
      path: '/api/v1/memories/search',
      body: { query: queries(), limit: 10 },
      expect: 200,
    }),
    create_task: () => ({ method: 'POST', path: '/api/v1/tasks', body: { ...creates() }, expect: 201 }),
    update_task: () => {
      const u = updates();
      return {
        method: 'PATCH',
        path: `/api/v1/tasks/${idFor(u.task_index)}`,
        body: u.notes ? { status: u.status, notes: u.notes } : { status: u.status },
        expect: 200,
      };
    },
    store_memory: () => ({ method: 'POST', path: '/api/v1/memories', body: { ...stores() }, expect: 201 }),
  };
}

async function send(
  baseUrl: string,
  call: RestCall,
): Promise<{ ms: number; status: number; op: number; embed: number; text: string }> {
  const t0 = performance.now();
  const response = await fetch(`${baseUrl}${call.path}`, {
    method: call.method,
    headers: call.body === undefined ? {} : { 'content-type': 'application/json' },
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
  });
  const text = await response.text();
  const ms = performance.now() - t0;
  const timing = response.headers.get('server-timing') ?? '';
  return { ms, status: response.status, op: timingPart(timing, 'op'), embed: timingPart(timing, 'embed'), text };
}

export interface StatementLine {
  /** Normalized query text, shortened. */
  query: string;
  calls: number;
  calls_per_op: number;
  mean_exec_ms: number;
  total_exec_ms: number;
  /** Σ total_plan_time (null when pg_stat_statements.track_planning is off). */
  total_plan_ms: number | null;
}

/** Statements run less often than this per call of the op count as occasional (background) work. */
export const OCCASIONAL_BELOW = 0.25;

export interface SqlPerCall {
  /** Σ total_exec_time of the service's statements during the series ÷ calls of the op. */
  sql_ms_per_call: number;
  /**
   * The part of it from statements run less than once per 4 calls: background work the series set off
   * (the embedding worker storing vectors, keyword statistics), not the request's own statements.
   */
  occasional_ms_per_call: number;
  /**
   * Σ total_plan_time ÷ calls of the op, and the part of it from occasional statements: the time the
   * server spent planning them (a prepared statement on its generic plan plans nothing). Null when
   * pg_stat_statements.track_planning is off for the database (see StatementStats.trackPlanning).
   */
  plan_ms_per_call: number | null;
  occasional_plan_ms_per_call: number | null;
  statements: StatementLine[];
}

export interface RestOpResult {
  op: OpKey;
  route: string;
  n: number;
  errors: number;
  warmup_errors: number;
  error_samples: string[];
  /** Client-observed round trip (fetch, body read). */
  client_ms: Summary;
  /** Server-Timing `op`: the operation inside the service (validation + SQL + mapping). */
  server_op_ms: Summary | null;
  /** Server-Timing `embed`, where the op embeds (search, store). */
  embed_ms: Summary | null;
  sql: SqlPerCall | null;
  /** CPU a call, by process (null when not measured). */
  cpu_ms_per_call: CpuPerCall | null;
}

/**
 * pg_stat_statements in the scratch database, when the server has it loaded: reset (for this database
 * only) before a series, read after. Monitoring statements (its own, the CPU meter's) are left out by
 * their text.
 */
export class StatementStats {
  private constructor(
    private readonly client: pg.Client,
    private readonly dbid: number,
  ) {}

  /** The stats, or why they are not available (then nothing was changed but possibly the extension). */
  static async open(databaseUrl: string): Promise<StatementStats | { unavailable: string }> {
    const client = new pg.Client({ connectionString: databaseUrl, application_name: 'devstream-hub-bench' });
    await client.connect();
    try {
      await client.query('create extension if not exists pg_stat_statements');
      const { rows } = await client.query<{ oid: number }>(
        'select oid::int as oid from pg_database where datname = current_database()',
      );
      const stats = new StatementStats(client, rows[0]!.oid);
      await stats.reset();
      await client.query('select count(*) from pg_stat_statements');
      return stats;
    } catch (error) {
      await client.end().catch(() => {});
      return { unavailable: (error as Error).message };
    }
  }

  /**
   * Turns pg_stat_statements.track_planning on for the database at `databaseUrl` (its sessions from
   * now on): planning is part of what a statement costs the server, and off by default. Returns why
   * not, when it cannot (not a superuser, the module not loaded): the figures then leave it out.
   */
  static async trackPlanning(databaseUrl: string): Promise<string | null> {
    const client = new pg.Client({ connectionString: databaseUrl, application_name: 'devstream-hub-bench' });
    try {
      await client.connect();
      await client.query(
        `do $$ begin execute format('alter database %I set pg_stat_statements.track_planning = on', current_database()); end $$`,
      );
      return null;
    } catch (error) {
      return (error as Error).message;
    } finally {
      await client.end().catch(() => {});
    }
  }

  /** Clears the entries of the scratch database only (other databases' stats are left alone). */
  async reset(): Promise<void> {
    await this.client.query('select pg_stat_statements_reset(0, $1::oid, 0)', [this.dbid]);
  }

  async read(opCalls: number): Promise<SqlPerCall> {
    const { rows } = await this.client.query<{
      query: string;
      calls: number;
      total: number;
      mean: number;
      plan: number;
    }>(
      `select query, calls::int as calls, total_exec_time as total, mean_exec_time as mean, total_plan_time as plan
         from pg_stat_statements
        where dbid = $1 and query not ilike '%pg_stat_statements%'
          -- The CPU meter's own look-up of the service's backends (bench/lib/cpu.ts).
          and query not ilike '%pg_stat_activity%'
        order by total_exec_time desc`,
      [this.dbid],
    );
    // This connection is in the scratch database: it has the database's setting (trackPlanning).
    const tracked =
      (
        await this.client.query<{ on: string | null }>(
          `select current_setting('pg_stat_statements.track_planning', true) as on`,
        )
      ).rows[0]?.on === 'on';
    const r3 = (x: number) => Math.round(x * 1000) / 1000;
    const sum = (of: typeof rows, key: 'total' | 'plan') => of.reduce((s, r) => s + r[key], 0);
    const occasional = rows.filter((r) => r.calls / opCalls < OCCASIONAL_BELOW);
    return {
      sql_ms_per_call: r3(sum(rows, 'total') / opCalls),
      occasional_ms_per_call: r3(sum(occasional, 'total') / opCalls),
      plan_ms_per_call: tracked ? r3(sum(rows, 'plan') / opCalls) : null,
      occasional_plan_ms_per_call: tracked ? r3(sum(occasional, 'plan') / opCalls) : null,
      statements: rows.map((r) => ({
        query: shorten(r.query),
        calls: r.calls,
        calls_per_op: Math.round((r.calls / opCalls) * 100) / 100,
        mean_exec_ms: r3(r.mean),
        total_exec_ms: r3(r.total),
        total_plan_ms: tracked ? r3(r.plan) : null,
      })),
    };
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

const shorten = (query: string) => {
  const flat = query.replace(/\s+/g, ' ').trim();
  return flat.length > 100 ? `${flat.slice(0, 99)}…` : flat;
};

/**
 * Each op's REST series: `warmup` calls, then (stats reset) `iters` measured calls. `consumed` is how
 * many arguments the harness took from each pool (its warm-up and measured calls, both phases).
 */
export async function probeRest(options: {
  baseUrl: string;
  workload: Workload;
  taskIds: Array<string | null>;
  consumed: number;
  sizes: ProbeSizes;
  stats: StatementStats | null;
  cpu?: CpuMeter;
  log: (line: string) => void;
}): Promise<RestOpResult[]> {
  const { baseUrl, sizes, stats } = options;
  const calls = restCalls(options.workload, options.taskIds, options.consumed);
  const results: RestOpResult[] = [];
  for (const op of OPS) {
    const next = calls[op];
    const errorSamples = new Set<string>();
    const failed = { warmup: 0, measured: 0 };
    const check = (r: Awaited<ReturnType<typeof send>>, call: RestCall, phase: 'warmup' | 'measured') => {
      if (r.status === call.expect) return true;
      failed[phase]++;
      if (errorSamples.size < 3) errorSamples.add(`${r.status} ${call.method} ${call.path}: ${r.text.slice(0, 200)}`);
      return false;
    };
    for (let i = 0; i < sizes.warmup; i++) {
      const call = next();
      check(await send(baseUrl, call), call, 'warmup');
    }
    // Built before the series: argument building stays out of the timing.
    const series = Array.from({ length: sizes.iters }, next);
    await stats?.reset();
    await options.cpu?.start();
    const client: number[] = [];
    const server: number[] = [];
    const embed: number[] = [];
    for (const call of series) {
      const r = await send(baseUrl, call);
      if (!check(r, call, 'measured')) continue;
      client.push(r.ms);
      if (!Number.isNaN(r.op)) server.push(r.op);
      if (!Number.isNaN(r.embed)) embed.push(r.embed);
    }
    const cpuPerCall = options.cpu ? await options.cpu.stop(sizes.iters) : null;
    const sql = stats ? await stats.read(sizes.iters) : null;
    const result: RestOpResult = {
      op,
      route: ROUTES[op],
      n: sizes.iters,
      errors: failed.measured,
      warmup_errors: failed.warmup,
      error_samples: [...errorSamples],
      client_ms: rounded(summarize(client)),
      server_op_ms: server.length ? rounded(summarize(server)) : null,
      embed_ms: embed.length ? rounded(summarize(embed)) : null,
      sql,
      cpu_ms_per_call: cpuPerCall,
    };
    results.push(result);
    options.log(
      `REST ${op.padEnd(27)} p50 ${fmtMs(result.client_ms.p50)} · Server-Timing op ${fmtMs(result.server_op_ms?.p50)}` +
        `${result.embed_ms ? ` (embed ${fmtMs(result.embed_ms.p50)})` : ''}` +
        `${sql ? ` · SQL ${fmtMs(sql.sql_ms_per_call)}/call` : ''}${result.errors ? ` · ${result.errors} errors` : ''}`,
    );
  }
  return results;
}

const fmtMs = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '?' : `${x.toFixed(2)} ms`);
