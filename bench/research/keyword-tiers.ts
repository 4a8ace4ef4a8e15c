// The keyword branch's candidate cap against no cap, on a seeded store: the DevStream workload's
// search questions (seed 42; the store is the service's, seeded by the harness, bench-http.mjs, e.g.
// with 10,000 or 100,000 memories in one project), each run as the keyword statement of a search
// of limit 10 (keywordRanksSql, prepared, as the service runs it) and as the same statement with the
// crowded tiers uncapped (every memory of a tier fetched and scored).
//   DATABASE_URL=postgres://…/<seeded store> npx tsx bench/research/keyword-tiers.ts [questions]
// Prints: the mean ms of the statement (alternating runs after warm-up), the questions whose top 10
// differ from the uncapped statement's, and the mean recall@10 of the capped top 10 against the
// uncapped one. The slowest questions come last, with their candidate count and whether the second
// tier ran.
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { openDb } from '../../src/db/client.js';
import { keywordRanksSql } from '../../src/db/queries/memories/hybrid-search.js';

const Q = Number(process.argv[2] ?? 300);
const RUNS = 6;
const { generateWorkload } = (await import(
  pathToFileURL(new URL('../../../shared/bench/devstream-workload/workload.mjs', import.meta.url).pathname).href
)) as { generateWorkload(o: object): { queries: string[] } };
const questions = generateWorkload({ seed: 42, memories: 300 }).queries.slice(0, Q);

const db = await openDb({ databaseUrl: process.env.DATABASE_URL! });
const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
const weights = { vector: 1, keyword: 1, neighbours: 0.4 };
const run = (name: string, text: string, values: readonly unknown[]) =>
  client.query({ name, text, values: values as unknown[] });

let capped = 0;
let uncapped = 0;
let recall = 0;
const differing: string[] = [];
const slow: Array<{ q: string; ms: number; candidates: number; second: boolean }> = [];
for (const q of questions) {
  const c = keywordRanksSql({ query: q, filters: {}, limit: 10, k: 30, weights }).compile(db.kysely);
  const all = c.sql.replace(/then 200 end as cap/, 'then 1000000000 end as cap');
  if (all === c.sql) throw new Error('the cap was not found in the statement: update this script');
  const probe = c.sql.replace(
    /select id, score, r from kw_ranked\s*$/,
    'select (select count(*) from kw_scored) as n, (select count(*) from kw_second) as second',
  );
  const ms = { capped: 0, uncapped: 0 };
  for (let i = 0; i < RUNS * 2; i++) {
    const which = i % 2 === 0 ? 'capped' : 'uncapped';
    const t = performance.now();
    await run(which, which === 'capped' ? c.sql : all, c.parameters);
    if (i >= 4) ms[which] += performance.now() - t;
  }
  const top = async (name: string, text: string) =>
    (await run(name, text, c.parameters)).rows.slice(0, 10).map((r: { id: string }) => r.id);
  const [a, b] = [await top('capped', c.sql), await top('uncapped', all)];
  const exact = new Set(b);
  recall += exact.size === 0 ? 1 : a.filter((id) => exact.has(id)).length / exact.size;
  if (a.join() !== b.join()) differing.push(q);
  const per = { capped: ms.capped / (RUNS - 2), uncapped: ms.uncapped / (RUNS - 2) };
  capped += per.capped;
  uncapped += per.uncapped;
  const [shape] = (await client.query(probe, c.parameters as unknown[])).rows as Array<{ n: number; second: number }>;
  slow.push({ q, ms: per.capped, candidates: Number(shape!.n), second: Number(shape!.second) > 0 });
}
console.log(
  `${questions.length} questions: keyword statement mean ${(capped / questions.length).toFixed(2)} ms ` +
    `(uncapped ${(uncapped / questions.length).toFixed(2)}); top 10 differs from the uncapped one for ` +
    `${differing.length}; recall@10 against it ${(recall / questions.length).toFixed(3)}`,
);
for (const s of slow.sort((x, y) => y.ms - x.ms).slice(0, 8))
  console.log(`  ${s.ms.toFixed(2)} ms, ${s.candidates} candidates${s.second ? ', second tier' : ''}: ${s.q}`);
await client.end();
await db.close();
