import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { CallToolResultSchema } from '@modelcontextprotocol/core';
import { AccessTracker } from '../../src/domain/memory/access-tracker.js';
import { Embedder } from '../../src/embeddings/embedder.js';
import { noEmbeddings } from '../../src/embeddings/provider.js';
import { VectorIndexes } from '../../src/embeddings/vector-indexes.js';
import { Kysely, PostgresDialect, type LogEvent } from 'kysely';
import pg from 'pg';
import type { Database } from '../../src/db/schema.js';
import { TASK_STATUSES } from '../../src/db/schema.js';
import type { Context } from '../../src/domain/context.js';
import { newId } from '../../src/domain/ids.js';
import { describeTools } from '../../src/mcp/server.js';
import { invoke } from '../../src/operations/invoke.js';
import type { AnyOperation } from '../../src/operations/operation.js';
import { createTaskOp, listPlansOp, listTasksOp, updateTaskOp } from '../../src/operations/tasks.js';
import type { SeededData } from './seed.js';
import { rounded, summarize, type Summary } from './stats.js';
import { SearchIndexCache } from '../../src/domain/graphs/search-index.js';

/**
 * Where a call's time goes, measured inside the bench process against the same database with the
 * same driver (kysely PostgresDialect over a pg pool), one call at a time:
 *   handler  = invoke(): zod input parse + every SQL round trip + row mapping (what the service runs)
 *   sql #k   = each statement's round trip as kysely logs it (statements of one call may overlap)
 *   render   = the operation's markdown text (MCP content[0].text)
 *   encode   = JSON.stringify of the MCP JSON-RPC result / of the REST body
 *   decode   = what the client does: JSON.parse (+ for MCP: CallToolResultSchema zod parse and the
 *              SDK's AJV validation of structuredContent against the tool's outputSchema)
 * End-to-end minus (handler + render + encode + decode) ≈ HTTP, Fastify, MCP transport and scheduling.
 */

export interface CaseBreakdown {
  handler_ms: Summary;
  statements: Array<{ sql: string; latency_ms: Summary }>;
  render_ms: Summary;
  encode_mcp_ms: Summary;
  encode_rest_ms: Summary;
  decode_mcp_ms: Summary;
  decode_rest_ms: Summary;
  mcp_bytes: number;
  rest_bytes: number;
  explain: Array<{ sql: string; params: unknown[]; plan: string }>;
}

export interface BreakdownResult {
  note: string;
  cases: Record<string, CaseBreakdown>;
  text: string;
}

export async function runBreakdown(
  seeded: SeededData,
  options: { iterations: number; warmup: number; databaseUrl: string },
): Promise<BreakdownResult> {
  let captured: LogEvent[] | undefined;
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10, application_name: 'devstream-hub-bench' });
  const kysely = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      captured?.push(event);
    },
  });
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  const ctx: Context = {
    db: kysely,
    caller: { name: null, scopes: new Set(['read', 'write', 'admin']) },
    log: silent,
    defaultProject: 'default',
    graphs: { indexes: new SearchIndexCache() },
    jobs: { analyzeRoots: [], queued() {} },
    memory: {
      embedder: new Embedder(noEmbeddings, silent),
      indexes: new VectorIndexes(kysely, silent),
      accesses: new AccessTracker(kysely, silent),
      queued() {},
      weights: { vector: 1, keyword: 1, neighbours: 0.4 },
    },
    notice() {},
    timing() {},
  };
  const described = new Map(
    describeTools([listTasksOp, createTaskOp, updateTaskOp, listPlansOp] as AnyOperation[]).map((t) => [t.name, t]),
  );
  const ajv = new AjvJsonSchemaValidator();

  let k = 0;
  const cases: Array<{ key: string; op: AnyOperation; args: () => Record<string, unknown> }> = [
    { key: 'list_tasks', op: listTasksOp as AnyOperation, args: () => ({}) },
    { key: 'list_tasks_filtered', op: listTasksOp as AnyOperation, args: () => ({ status: 'pending', priority: 7 }) },
    { key: 'list_plans', op: listPlansOp as AnyOperation, args: () => ({}) },
    {
      key: 'create_task',
      op: createTaskOp as AnyOperation,
      args: () => {
        const plan = seeded.plans[(k * 37) % seeded.plans.length]!;
        return {
          title: `Breakdown task ${k}`,
          description: 'Created by the benchmark breakdown.',
          task_type: 'coding',
          priority: 1 + (k % 10),
          phase_name: plan.phases[k % plan.phases.length]!.name,
          project: plan.title,
        };
      },
    },
    {
      key: 'update_task',
      op: updateTaskOp as AnyOperation,
      args: () => ({
        task_id: seeded.tasks[(k * 104_729) % seeded.tasks.length]!.id,
        status: TASK_STATUSES[k % TASK_STATUSES.length],
      }),
    },
  ];

  const out: Record<string, CaseBreakdown> = {};
  const text: string[] = [];
  try {
    for (const c of cases) {
      const validate = ajv.getValidator(described.get(c.op.name)!.outputSchema as never);
      const handler: number[] = [];
      const render: number[] = [];
      const encMcp: number[] = [];
      const encRest: number[] = [];
      const decMcp: number[] = [];
      const decRest: number[] = [];
      const stmt: number[][] = [];
      let stmtSql: string[] = [];
      let mcpBytes = 0;
      let restBytes = 0;
      let sample: LogEvent[] = [];
      let sampleTaskId: string | undefined;
      for (let i = -options.warmup; i < options.iterations; i++) {
        k++;
        captured = [];
        const t0 = performance.now();
        const { input, output } = await invoke(c.op, ctx, c.args());
        const t1 = performance.now();
        const events = captured.filter((e) => !/^\s*(begin|commit|rollback)\b/i.test(e.query.sql));
        captured = undefined;
        const textOut = c.op.render(output as never, input as never);
        const t2 = performance.now();
        const mcpJson = JSON.stringify({
          result: { content: [{ type: 'text', text: textOut }], structuredContent: output },
          jsonrpc: '2.0',
          id: i,
        });
        const t3 = performance.now();
        const restJson = JSON.stringify(output);
        const t4 = performance.now();
        const parsed = JSON.parse(mcpJson) as { result: unknown };
        const result = CallToolResultSchema.parse(parsed.result);
        const valid = validate(result.structuredContent);
        if (!valid.valid) throw new Error(`${c.key}: output does not match outputSchema: ${valid.errorMessage}`);
        const t5 = performance.now();
        JSON.parse(restJson);
        const t6 = performance.now();
        if (i < 0) continue;
        handler.push(t1 - t0);
        render.push(t2 - t1);
        encMcp.push(t3 - t2);
        encRest.push(t4 - t3);
        decMcp.push(t5 - t4);
        decRest.push(t6 - t5);
        events.forEach((e, j) => (stmt[j] ??= []).push(e.queryDurationMillis));
        if (i === 0) {
          stmtSql = events.map((e) => e.query.sql.replace(/\s+/g, ' ').trim());
          sample = events;
          sampleTaskId = c.key === 'create_task' ? (output as { task: { id: string } }).task.id : undefined;
          mcpBytes = Buffer.byteLength(mcpJson);
          restBytes = Buffer.byteLength(restJson);
        }
      }

      const explain: CaseBreakdown['explain'] = [];
      for (const e of sample) {
        const client = await pool.connect();
        try {
          await client.query('begin');
          // Re-running an insert of the sampled call needs a fresh task id (rolled back afterwards).
          const params = e.query.parameters.map((p) => (p === sampleTaskId ? newId() : p));
          const res = await client.query(`explain (analyze, buffers) ${e.query.sql}`, params);
          await client.query('rollback');
          explain.push({
            sql: e.query.sql.replace(/\s+/g, ' ').trim(),
            params: [...e.query.parameters],
            plan: res.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'),
          });
        } catch (error) {
          await client.query('rollback').catch(() => {});
          explain.push({
            sql: e.query.sql,
            params: [...e.query.parameters],
            plan: `EXPLAIN failed: ${(error as Error).message}`,
          });
        } finally {
          client.release();
        }
      }

      const b: CaseBreakdown = {
        handler_ms: rounded(summarize(handler)),
        statements: stmtSql.map((s, j) => ({ sql: s, latency_ms: rounded(summarize(stmt[j] ?? [])) })),
        render_ms: rounded(summarize(render)),
        encode_mcp_ms: rounded(summarize(encMcp)),
        encode_rest_ms: rounded(summarize(encRest)),
        decode_mcp_ms: rounded(summarize(decMcp)),
        decode_rest_ms: rounded(summarize(decRest)),
        mcp_bytes: mcpBytes,
        rest_bytes: restBytes,
        explain,
      };
      out[c.key] = b;

      const ps = (s: Summary) => `${s.p50.toFixed(2)}/${s.p95.toFixed(2)}`;
      text.push(
        `${c.key}: handler ${ps(b.handler_ms)} ms (p50/p95) · render ${ps(b.render_ms)} · encode mcp ${ps(b.encode_mcp_ms)} rest ${ps(b.encode_rest_ms)} · ` +
          `client decode mcp ${ps(b.decode_mcp_ms)} rest ${ps(b.decode_rest_ms)} · body mcp ${(mcpBytes / 1024).toFixed(1)} KiB rest ${(restBytes / 1024).toFixed(1)} KiB`,
      );
      b.statements.forEach((s, j) =>
        text.push(`  sql #${j + 1} ${ps(s.latency_ms)} ms  ${s.sql.slice(0, 150)}${s.sql.length > 150 ? '…' : ''}`),
      );
      for (const [j, e] of explain.entries()) {
        const lines = e.plan.split('\n');
        const exec = lines.find((l) => l.startsWith('Execution Time')) ?? '';
        const planning = lines.find((l) => l.startsWith('Planning Time')) ?? '';
        text.push(`  explain #${j + 1}: ${planning}; ${exec}`);
        for (const l of lines.filter((l) => !/^(Planning|Execution) Time|^Planning:|^ +Buffers/.test(l)))
          text.push(`    ${l}`);
      }
      text.push('');
    }
  } finally {
    await kysely.destroy();
  }
  return {
    note:
      'In-process, same database and driver as the service. handler = invoke() (zod input parse + SQL round trips + row mapping); ' +
      'render = markdown text; encode = JSON.stringify of MCP JSON-RPC result / REST body; decode = client JSON.parse (+ MCP: ' +
      'CallToolResultSchema parse and AJV outputSchema validation). Times p50/p95 ms.',
    cases: out,
    text: text.join('\n'),
  };
}
