// Vector branch alone: latency and recall@30 against exact search, by ef_search and filter.
import pg from 'pg';
import { FakeOllama } from '../../support/fake-ollama.js';
import { dialect, readLocomo } from '../lib/locomo.js';
const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
await client.query(`set hnsw.iterative_scan = relaxed_order`);
const qs = (await readLocomo()).questions.map((q) => q.question);
const projects = (await client.query(`select id, title from intervention_plans order by title`)).rows;
const pid = (c: number) => projects.find((p) => p.title === `bench ${c}`)!.id;
const filters: Record<string, (c: number) => string> = {
  none: () => 'true',
  project: (c) => `project_id = '${pid(c)}'`,
  type: () => `content_type = 'decision'`,
};
const cast = process.env.HALF ? 'halfvec(768)' : 'vector(768)';
for (const ef of (process.env.EF ?? '40,100').split(',')) {
  await client.query(`set hnsw.ef_search = ${ef}`);
  for (const [name, f] of Object.entries(filters)) {
    const times: number[] = [];
    let recall = 0;
    for (let i = 0; i < 80; i++) {
      const c = i % 17;
      const q = `[${FakeOllama.vector(dialect(qs[(i * 7919) % qs.length]!, c), 768, true).join(',')}]`;
      const sqlText = `select memory_id as id from memory_vectors m where embedding_dims = 768 and ${f(c)} order by embedding::${cast} <=> $1::${cast} limit 30`;
      const t = performance.now();
      const got = (await client.query(sqlText, [q])).rows.map((r) => r.id);
      times.push(performance.now() - t);
      if (i < 20) {
        await client.query('begin; set local enable_indexscan = off');
        const exact = (await client.query(sqlText, [q])).rows.map((r) => r.id);
        await client.query('commit');
        recall += exact.filter((id) => got.includes(id)).length / Math.max(1, exact.length) / 20;
      }
    }
    times.sort((a, b) => a - b);
    console.log(
      `ef ${ef} ${name.padEnd(8)} p50 ${times[40]!.toFixed(1)} p95 ${times[76]!.toFixed(1)} recall@30 ${recall.toFixed(3)}`,
    );
  }
}
await client.end();
