// Times the search statement at the SQL level on an existing database: mean wall time per case.
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { openDb } from '../../src/db/client.js';
import { hybridSearchSql, type SearchParams } from '../../src/db/queries/memories.js';
import { FakeOllama } from '../../support/fake-ollama.js';

const db = await openDb({ databaseUrl: process.env.DATABASE_URL! });
const qs = readFileSync('../shared/bench/locomo/queries.jsonl', 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l).question as string);
const neighbours = Number(process.env.NB ?? 0.4);
const cases: Record<string, (q: string, i: number) => SearchParams> = {
  kw_project: (q, i) => ({
    query: q,
    filters: { project: `bench ${i % 17}` },
    limit: 10,
    k: 30,
    weights: { vector: 1, keyword: 1, neighbours },
  }),
  kw_all: (q) => ({ query: q, filters: {}, limit: 10, k: 30, weights: { vector: 1, keyword: 1, neighbours } }),
  hy_project: (q, i) => ({
    query: q,
    filters: { project: `bench ${i % 17}` },
    limit: 10,
    k: 30,
    weights: { vector: 1, keyword: 1, neighbours },
    vector: { values: FakeOllama.vector(q), model: 'nomic-embed-text', dims: 768 },
  }),
  hy_project_type: (q, i) => ({
    query: q,
    filters: { project: `bench ${i % 17}`, content_type: 'decision' },
    limit: 10,
    k: 30,
    weights: { vector: 1, keyword: 1, neighbours },
    vector: { values: FakeOllama.vector(q), model: 'nomic-embed-text', dims: 768 },
  }),
  hy_all: (q) => ({
    query: q,
    filters: {},
    limit: 10,
    k: 30,
    weights: { vector: 1, keyword: 1, neighbours },
    vector: { values: FakeOllama.vector(q), model: 'nomic-embed-text', dims: 768 },
  }),
};
const only = process.argv[2];
for (const [name, make] of Object.entries(cases)) {
  if (only && !name.includes(only)) continue;
  const times: number[] = [];
  for (let i = 0; i < 120; i++) {
    const p = make(qs[(i * 7919) % qs.length]!, i);
    const t = performance.now();
    await db.kysely.transaction().execute(async (trx) => {
      if (p.vector)
        await sql`select set_config('hnsw.ef_search', '100', true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`.execute(
          trx,
        );
      await hybridSearchSql(p).execute(trx);
    });
    if (i >= 20) times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(name.padEnd(18), 'p50', times[49]!.toFixed(1), 'p95', times[94]!.toFixed(1));
}
await db.close();
