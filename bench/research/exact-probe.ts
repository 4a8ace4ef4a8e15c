import pg from 'pg';
import { FakeOllama } from '../../support/fake-ollama.js';
const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
await c.connect();
await c.query('set max_parallel_workers_per_gather = 0');
const pids = (await c.query(`select id from intervention_plans where title like 'bench %'`)).rows.map((r) => r.id);
for (const [table, type] of [
  ['t_vec', 'vector'],
  ['t_half', 'halfvec'],
  ['t_vec', 'vector'],
  ['t_half', 'halfvec'],
]) {
  const times: number[] = [];
  for (let i = 0; i < 60; i++) {
    const q = `[${FakeOllama.vector(`query ${i} about dogs and parks`, 768, true).join(',')}]`;
    const t = performance.now();
    await c.query(
      `select id, distance from (select id, embedding::${type}(768) <=> $1::${type}(768) as distance from ${table} where project_id = $2 offset 0) s order by distance limit 30`,
      [q, pids[i % pids.length]],
    );
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(table, 'p50', times[30]!.toFixed(1), 'p95', times[57]!.toFixed(1));
}
await c.end();
