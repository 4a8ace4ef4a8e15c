// Latency of winner.sql on the 100k table: p50/p95/max over N LoCoMo questions, sequential, warm.
import pg from 'pg';
import fs from 'node:fs';
import { queries } from './harness.ts';
const DB = process.env.DB100K ?? 'postgres://postgres@127.0.0.1:54329/kwresearch100k';
const file = process.argv[2] ?? 'winner.sql';
const sql = fs.readFileSync(new URL('./' + file, import.meta.url), 'utf8');
const c = new pg.Client(DB);
await c.connect();
await c.query(`PREPARE dummy AS SELECT 1`);
const N = +(process.env.N ?? 300);
const sample = queries.filter((_, i) => i % Math.floor(queries.length / N) === 0).slice(0, N);
const cases: Record<string, (q: string, i: number) => unknown[]> = {
  'scoped, no filters': (q, i) => [q, `p${i % 17}`, 30, null, null, null, null],
  'scoped + type + date': (q, i) => [q, `p${i % 17}`, 30, ['conversation', 'note'], '2023-06-01', '2024-06-01', null],
  'unscoped, no filters': (q) => [q, null, 30, null, null, null, null],
  'unscoped + type + date': (q) => [q, null, 30, ['decision'], '2024-01-01', '2024-03-01', null],
};
const pct = (a: number[], p: number) => a[Math.min(a.length - 1, Math.floor(p * a.length))];
for (const [name, mk] of Object.entries(cases)) {
  for (let i = 0; i < 20; i++) await c.query(sql, mk(sample[i].question, i)); // warm-up
  const t: number[] = [];
  let rows = 0;
  for (let i = 0; i < sample.length; i++) {
    const t0 = performance.now();
    const r = await c.query(sql, mk(sample[i].question, i));
    t.push(performance.now() - t0);
    rows += r.rowCount ?? 0;
  }
  t.sort((a, b) => a - b);
  console.log(
    `| ${name} | ${pct(t, 0.5).toFixed(2)} | ${pct(t, 0.95).toFixed(2)} | ${t[t.length - 1].toFixed(2)} | ${(rows / t.length).toFixed(1)} |`,
  );
}
await c.end();
