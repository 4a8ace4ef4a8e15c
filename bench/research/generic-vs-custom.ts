// The one-project hybrid statement per query, on two connections: one forced to custom plans, one
// to the generic plan (both prepared). Prints p50/p95 of each and the queries generic makes slower.
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { hybridSearchSql } from '../../src/db/queries/memories/hybrid-search.js';
import type { SearchParams } from '../../src/db/queries/memories/search-params.js';
import { FakeOllama } from '../../support/fake-ollama.js';
import { dialect, readLocomo } from '../lib/locomo.js';
const base = '-c hnsw.ef_search=100 -c hnsw.iterative_scan=relaxed_order -c max_parallel_workers_per_gather=0';
const mk = (mode: string) =>
  new pg.Client({ connectionString: process.env.DATABASE_URL, options: `${base} -c plan_cache_mode=${mode}` });
const custom = mk(process.env.A ?? 'force_custom_plan');
const generic = mk(process.env.B ?? 'force_generic_plan');
await custom.connect();
await generic.connect();
const kysely = new Kysely<any>({
  dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 }) }),
});
const qs = (await readLocomo()).questions.map((q) => q.question);
const mode = process.env.MODE ?? 'project';
const tc: number[] = [];
const tg: number[] = [];
const worse: Array<[number, string]> = [];
const names = new Set<string>();
for (let i = 0; i < 240; i++) {
  const c = i % 17;
  const q = dialect(qs[(i * 7919) % qs.length]!, c);
  const p: SearchParams = {
    query: q,
    filters: mode === 'project' ? { project: `bench ${c}` } : {},
    limit: 10,
    k: 30,
    weights: { vector: 1, keyword: 1, neighbours: 0.4 },
    vector: { values: FakeOllama.vector(q, 768, true), model: 'nomic-embed-text', dims: 768 },
  };
  const cq = hybridSearchSql(p).compile(kysely);
  const name = 'g' + cq.sql.length;
  const first = !names.has(name);
  names.add(name);
  const run = async (cl: pg.Client) => {
    const t = performance.now();
    await cl.query({ name: first ? name : name, text: cq.sql, values: cq.parameters as any[] });
    return performance.now() - t;
  };
  const a = await run(custom);
  const b = await run(generic);
  if (i >= 20) {
    tc.push(a);
    tg.push(b);
    if (b - a > 5) worse.push([b - a, `${c}: ${q.slice(0, 60)}`]);
  }
}
const pct = (xs: number[], p: number) => [...xs].sort((x, y) => x - y)[Math.floor(p * xs.length)]!.toFixed(1);
console.log('custom  p50', pct(tc, 0.5), 'p95', pct(tc, 0.95));
console.log('generic p50', pct(tg, 0.5), 'p95', pct(tg, 0.95));
worse.sort((x, y) => y[0] - x[0]);
console.log(worse.length, 'queries >5 ms slower generic');
for (const w of worse.slice(0, 8)) console.log(w[0].toFixed(1), w[1]);
await custom.end();
await generic.end();
await kysely.destroy();
