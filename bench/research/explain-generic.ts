// EXPLAIN ANALYZE of the search statement's generic plan (what a prepared statement runs after 5 calls).
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { hybridSearchSql } from '../../src/db/queries/memories/hybrid-search.js';
import { FakeOllama } from '../../support/fake-ollama.js';
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: 1,
  options:
    '-c hnsw.ef_search=100 -c hnsw.iterative_scan=relaxed_order -c max_parallel_workers_per_gather=0 -c plan_cache_mode=force_generic_plan',
});
const kysely = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
const q = process.argv[2] ?? 'What books has Tim read?';
const filters = {
  ...(process.argv[3] === 'all' ? {} : { project: process.argv[3] ?? 'bench 3' }),
  ...(process.env.TYPE ? { content_type: process.env.TYPE, created_after: '2000-01-01T00:00:00Z' } : {}),
};
const p = {
  query: q,
  filters,
  limit: 10,
  k: 30,
  weights: { vector: 1, keyword: 1, neighbours: 0.4 },
  vector: process.argv.includes('--vec')
    ? { values: FakeOllama.vector(q, 768, true), model: 'nomic-embed-text', dims: 768 }
    : undefined,
};
const c = hybridSearchSql(p as any).compile(kysely);
const client = await pool.connect();
await client.query({ name: 's1', text: c.sql, values: c.parameters as any[] });
const lit = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? `'{${v.join(',')}}'` : `'${String(v).replace(/'/g, "''")}'`;
const r = await client.query(`explain (analyze, buffers) execute s1(${c.parameters.map(lit).join(',')})`);
console.log(r.rows.map((x) => x['QUERY PLAN']).join('\n'));
client.release();
await pool.end();
