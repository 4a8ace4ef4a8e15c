// Evaluation harness: runs a keyword-branch SQL variant for every LoCoMo question
// ($1 = question text, $2 = project_id (conv), $3 = k) and computes metrics on the top 10.
import pg from 'pg';
import { readLocomo, type Question } from '../lib/locomo.js';
export const DB = process.env.DB ?? 'postgres://postgres@127.0.0.1:54329/kwresearch';
export type Q = Question;
export const queries: Q[] = (await readLocomo()).questions;

export type Metrics = { n: number; r5: number; r10: number; fr5: number; fr10: number; mrr: number };
function agg(list: { ranked: string[]; ev: string[] }[]): Metrics {
  let r5 = 0,
    r10 = 0,
    fr5 = 0,
    fr10 = 0,
    mrr = 0;
  for (const { ranked, ev } of list) {
    const evs = new Set(ev);
    const first = ranked.slice(0, 10).findIndex((id) => evs.has(id));
    if (first >= 0 && first < 5) r5++;
    if (first >= 0) {
      r10++;
      mrr += 1 / (first + 1);
    }
    fr5 += ranked.slice(0, 5).filter((id) => evs.has(id)).length / evs.size;
    fr10 += ranked.slice(0, 10).filter((id) => evs.has(id)).length / evs.size;
  }
  const n = list.length || 1;
  return { n: list.length, r5: r5 / n, r10: r10 / n, fr5: fr5 / n, fr10: fr10 / n, mrr: mrr / n };
}

export async function evaluate(sql: string, opts: { k?: number; conc?: number; extra?: (q: Q) => unknown[] } = {}) {
  const k = opts.k ?? 30,
    conc = opts.conc ?? 4;
  const pool = new pg.Pool({ connectionString: DB, max: conc });
  const results: { q: Q; ranked: string[] }[] = new Array(queries.length);
  let next = 0,
    errors = 0;
  let firstErr: unknown;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (next < queries.length) {
        const i = next++;
        const q = queries[i]!;
        try {
          const r = await pool.query(sql, [q.question, q.conv, k, ...(opts.extra?.(q) ?? [])]);
          results[i] = { q, ranked: r.rows.map((x: any) => x.id) };
        } catch (e) {
          errors++;
          firstErr ??= e;
          results[i] = { q, ranked: [] };
        }
      }
    }),
  );
  const ms = performance.now() - t0;
  await pool.end();
  const all = agg(results.map((r) => ({ ranked: r.ranked, ev: r.q.evidence })));
  const byCat: Record<number, Metrics> = {};
  for (const c of [1, 2, 3, 4])
    byCat[c] = agg(results.filter((r) => r.q.category === c).map((r) => ({ ranked: r.ranked, ev: r.q.evidence })));
  if (errors) console.error('ERRORS', errors, firstErr);
  return { all, byCat, ms, errors, results };
}

export const f = (x: number) => x.toFixed(3);
export function row(name: string, m: Awaited<ReturnType<typeof evaluate>>) {
  const c = m.byCat;
  return `| ${name} | ${f(m.all.fr5)} | ${f(m.all.fr10)} | ${f(m.all.mrr)} | ${f(m.all.r5)} | ${f(m.all.r10)} | ${[1, 2, 3, 4].map((i) => f(c[i]!.fr10) + '/' + f(c[i]!.mrr)).join(' | ')} | ${(m.ms / queries.length).toFixed(2)} |`;
}
export const header =
  '| variant | R@5 (frac) | R@10 (frac) | MRR@10 | anyHit@5 | anyHit@10 | c1 R@10/MRR | c2 | c3 | c4 | ms/q |\n|---|---|---|---|---|---|---|---|---|---|---|';
