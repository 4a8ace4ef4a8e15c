import pg from 'pg';
import { FakeOllama } from '/work/main/support/fake-ollama.js';
const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
await c.connect();
await c.query(
  `set hnsw.iterative_scan = relaxed_order; set hnsw.ef_search = 100; set enable_indexscan = ${process.env.IDX ?? 'on'}`,
);
const q = `[${FakeOllama.vector(process.argv[2] ?? 'When did Caroline go to the support group', 768, true).join(',')}]`;
for (const extra of ['', "and project_id = (select id from intervention_plans where title='bench 3')"]) {
  for (let i = 0; i < 3; i++) {
    const r = await c.query(
      `explain (analyze, buffers, timing off) select id from semantic_memory m where embedding_dims = 768 and archived_at is null ${extra} order by embedding::vector(768) <=> $1::vector(768) limit 30`,
      [q],
    );
    if (i === 2)
      console.log(
        r.rows
          .map((x) => x['QUERY PLAN'])
          .filter((l: string) => !l.includes('Order By'))
          .join('\n'),
      );
  }
}
await c.end();
