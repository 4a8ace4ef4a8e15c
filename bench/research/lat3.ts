// Sequential latency (p50/p95) on the LoCoMo scratch table, project-scoped. usage: lat3.ts file.sql...
import pg from 'pg';
import fs from 'node:fs';
import { queries, DB } from './harness.ts';
const c = new pg.Client(DB);
await c.connect();
const sample = queries.filter((_, i) => i % 5 === 0);
for (const f of process.argv.slice(2)) {
  const sql = fs.readFileSync(new URL('./' + f, import.meta.url), 'utf8');
  for (const q of sample.slice(0, 20)) await c.query(sql, [q.question, q.conv, 30, null, null, null, null]);
  const t: number[] = [];
  for (const q of sample) {
    const t0 = performance.now();
    await c.query(sql, [q.question, q.conv, 30, null, null, null, null]);
    t.push(performance.now() - t0);
  }
  t.sort((a, b) => a - b);
  console.log(f, 'p50', t[t.length >> 1].toFixed(2), 'p95', t[Math.floor(t.length * 0.95)].toFixed(2));
}
await c.end();
