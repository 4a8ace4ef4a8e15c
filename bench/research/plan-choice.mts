// Which plan a prepared hybrid search gets after repeated runs on one connection (generic or custom),
// and its time per run: DATABASE_URL=… tsx bench/research/plan-choice.mts ["bench 3"|all]
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { hybridSearchSql } from '../../src/db/queries/memories/hybrid-search.js';
import { FakeOllama } from '../../support/fake-ollama.js';
import { readLocomo } from '../lib/locomo.js';
const client = new pg.Client({ connectionString: process.env.DATABASE_URL! });
await client.connect();
if (process.env.GENERIC) await client.query('set plan_cache_mode = force_generic_plan');
await client.query(
  "select set_config('hnsw.ef_search', '100', false), set_config('hnsw.iterative_scan', 'relaxed_order', false), set_config('max_parallel_workers_per_gather', '0', false)",
);
const kysely = new Kysely<any>({
  dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL! }) }),
});
const qs = (await readLocomo()).questions.map((q) => q.question);
const scope = process.argv[2] ?? 'bench 3';
const times: number[] = [];
for (let i = 0; i < 60; i++) {
  const q = qs[(i * 7919) % qs.length]!;
  const p = {
    query: q,
    filters: {
      ...(scope === 'all' ? {} : { project: scope }),
      ...(process.env.SINCE ? { content_type: 'decision', created_after: process.env.SINCE } : {}),
    },
    limit: 10,
    k: 30,
    weights: { vector: 1, keyword: 1, neighbours: 0.4 },
    vector: { values: FakeOllama.vector(q, 768, true), model: 'nomic-embed-text', dims: 768 },
  };
  const c = hybridSearchSql(p as any).compile(kysely);
  const t = performance.now();
  await client.query({ name: 'probe', text: c.sql, values: c.parameters as unknown[] });
  if (i >= 10) times.push(performance.now() - t);
}
const r = await client.query("select generic_plans, custom_plans from pg_prepared_statements where name = 'probe'");
times.sort((a, b) => a - b);
console.log(
  scope,
  r.rows[0],
  'p50',
  times[Math.floor(times.length / 2)]!.toFixed(1),
  'p95',
  times[Math.floor(times.length * 0.95)]!.toFixed(1),
);
await client.end();
await kysely.destroy();
