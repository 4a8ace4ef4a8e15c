// How many evidence docs share >=1 / >=2 query lexemes with the question? (bound for lexical ranking)
import pg from 'pg';
import { queries, DB } from './harness.ts';
const c = new pg.Client(DB);
await c.connect();
const r = await c.query(
  `SELECT q.qid, q.cat, e.ev, (SELECT count(*) FROM unnest(tsvector_to_array(m.fts)) l WHERE l = ANY (tsvector_to_array(to_tsvector('english', q.question)))) AS nm
  FROM jsonb_to_recordset($1::jsonb) q(qid text, cat int, question text, evidence text[]) CROSS JOIN unnest(q.evidence) e(ev) LEFT JOIN semantic_memory m ON m.id = e.ev`,
  [JSON.stringify(queries.map((q) => ({ qid: q.qid, cat: q.category, question: q.question, evidence: q.evidence })))],
);
const by: Record<string, number[]> = {};
for (const x of r.rows) (by[x.cat] ??= []).push(+x.nm);
for (const [cat, a] of Object.entries(by))
  console.log(
    cat,
    a.length,
    'nm0',
    (a.filter((v) => v === 0).length / a.length).toFixed(3),
    'nm1',
    (a.filter((v) => v === 1).length / a.length).toFixed(3),
    'nm>=2',
    (a.filter((v) => v >= 2).length / a.length).toFixed(3),
  );
const a = r.rows.map((x) => +x.nm);
console.log('all', a.length, 'nm0', (a.filter((v) => v === 0).length / a.length).toFixed(3));
await c.end();
