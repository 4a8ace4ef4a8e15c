// HNSW recall by ef_search on a real (small) model: the DevStream workload's memories (seed 42,
// --memories N, default 100,000, all in one project as the harness stores them) and its search
// queries, embedded with GloVe 100-D SIF (bench/lib/glove-ollama.ts), in a scratch table indexed as
// the service indexes memory_vectors (HNSW over halfvec, cosine, pgvector's default m 16 /
// ef_construction 64), searched as the vector branch searches it (iterative scan, relaxed order,
// re-sorted, k = 30: a search of limit 10). Exact top 30 by a sequential scan of the same halfvecs.
//   DATABASE_URL=postgres://…/postgres npx tsx bench/research/ef-glove.ts [N] [queries]
// Prints, per ef_search: recall@30 (the exact 30 found), recall@10 (the exact 10 in the index's
// first 10), the exact 10 within the index's 30, and the statement's p50 / p95 ms.
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { GloveVectors } from '../lib/glove-ollama.js';

const N = Number(process.argv[2] ?? 100_000);
const Q = Number(process.argv[3] ?? 300);
const K = 30;
const { generateWorkload } = (await import(
  pathToFileURL(new URL('../../../shared/bench/devstream-workload/workload.mjs', import.meta.url).pathname).href
)) as { generateWorkload(o: object): { memories: Array<{ content: string }>; queries: string[] } };

const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
await admin.connect();
const name = `dsh_ef_glove_${N}`;
const exists = (await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
if (!exists) await admin.query(`create database ${name}`);
await admin.end();
const url = new URL(process.env.DATABASE_URL!);
url.pathname = `/${name}`;
const db = new pg.Client({ connectionString: url.href });
await db.connect();

const glove = await GloveVectors.load();
const work = generateWorkload({ seed: 42, memories: N, queries: Q });
const lit = (v: number[]) => `[${v.map((x) => x.toFixed(6)).join(',')}]`;
if (!exists) {
  const t = performance.now();
  await db.query('create extension if not exists vector');
  await db.query('create table gv (id int primary key, e halfvec(100) not null)');
  for (let i = 0; i < work.memories.length; i += 1000) {
    const chunk = work.memories.slice(i, i + 1000);
    await db.query('insert into gv select * from unnest($1::int[], $2::halfvec(100)[])', [
      chunk.map((_, j) => i + j),
      chunk.map((m) => lit(glove.embed(m.content))),
    ]);
  }
  await db.query(`set maintenance_work_mem = '1GB'`);
  await db.query('create index on gv using hnsw (e halfvec_cosine_ops)');
  await db.query('vacuum analyze gv');
  console.log(`loaded and indexed ${N} in ${((performance.now() - t) / 1000).toFixed(0)} s`);
}
// GRAPH=m,ef_construction: the same vectors in a table of their own, indexed with that graph.
const [m, efc] = (process.env.GRAPH ?? '16,64').split(',').map(Number);
const table = m === 16 && efc === 64 ? 'gv' : `gv_m${m}_efc${efc}`;
if ((await db.query('select to_regclass($1) as t', [table])).rows[0].t === null) {
  const t = performance.now();
  await db.query(`create table ${table} as select * from gv`);
  await db.query(`set maintenance_work_mem = '1GB'`);
  await db.query(
    `create index on ${table} using hnsw (e halfvec_cosine_ops) with (m = ${m}, ef_construction = ${efc})`,
  );
  await db.query(`vacuum analyze ${table}`);
  console.log(`${table}: copied and indexed in ${((performance.now() - t) / 1000).toFixed(0)} s`);
}
const distinct = (await db.query('select count(distinct e::text) as n from gv')).rows[0].n;
console.log(
  `${N} memories (${distinct} distinct vectors), ${work.queries.length} queries, k ${K}, HNSW m ${m} ef_construction ${efc}`,
);

await db.query(`set hnsw.iterative_scan = ${process.env.ITERATIVE ?? 'relaxed_order'}`);
await db.query('set max_parallel_workers_per_gather = 0');
const search = `with vec as materialized (select id, e <=> $1::halfvec(100) as d from ${table} order by e <=> $1::halfvec(100) limit ${K})
                select id, d from vec order by d, id`;
const queries = work.queries.map((q) => lit(glove.embed(q)));
const exact: number[][] = [];
const exactD: number[][] = [];
await db.query('set enable_indexscan = off');
for (const q of queries) {
  const rows = (await db.query(search, [q])).rows;
  exact.push(rows.map((r) => r.id));
  exactD.push(rows.map((r) => Number(r.d)));
}
// Near-ties: how many memories lie within 0.1 % of the exact 30th distance, beyond the 30.
let crowd = 0;
for (const [i, q] of queries.entries()) {
  const d30 = exactD[i]!.at(-1)!;
  crowd +=
    Number(
      (await db.query(`select count(*) as n from gv where e <=> $1::halfvec(100) <= $2`, [q, d30 * 1.001])).rows[0].n,
    ) / queries.length;
}
console.log(`memories within 0.1 % of the exact 30th distance: ${crowd.toFixed(1)} a query (mean)`);
await db.query('set enable_indexscan = on');

for (const ef of (process.env.EF ?? '20,30,40,60,100,200').split(',').map(Number)) {
  await db.query(`set hnsw.ef_search = ${ef}`);
  for (const q of queries.slice(0, 20)) await db.query(search, [q]); // warm
  const times: number[] = [];
  let r30 = 0;
  let r10 = 0;
  let top10In30 = 0;
  let byDistance = 0;
  for (const [i, q] of queries.entries()) {
    const t = performance.now();
    const rows = (await db.query(search, [q])).rows;
    times.push(performance.now() - t);
    const got = rows.map((r) => r.id as number);
    // As good as the exact: no farther than the exact 30th (ties within 0.1 % count).
    const d30 = exactD[i]!.at(-1)!;
    byDistance += rows.filter((r) => Number(r.d) <= d30 * 1.001).length / K;
    const want = exact[i]!;
    r30 += want.filter((id) => got.includes(id)).length / want.length;
    r10 += want.slice(0, 10).filter((id) => got.slice(0, 10).includes(id)).length / Math.min(10, want.length);
    top10In30 += want.slice(0, 10).filter((id) => got.includes(id)).length / Math.min(10, want.length);
  }
  times.sort((a, b) => a - b);
  const n = queries.length;
  console.log(
    `ef_search ${String(ef).padStart(3)}: within the exact 30th distance ${(byDistance / n).toFixed(3)} · recall@30 ${(r30 / n).toFixed(3)} · recall@10 ${(r10 / n).toFixed(3)} · exact 10 in the 30 ${(top10In30 / n).toFixed(3)} · p50 ${times[Math.floor(n * 0.5)]!.toFixed(2)} ms p95 ${times[Math.floor(n * 0.95)]!.toFixed(2)} ms`,
  );
}
await db.end();
