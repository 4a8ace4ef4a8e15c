import { readFileSync } from 'node:fs';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { hybridSearchSql, type SearchParams } from '../../src/db/queries/memories.js';
import { FakeOllama } from '../../support/fake-ollama.js';
const url = process.env.DATABASE_URL!;
const client = new pg.Client({
  connectionString: url,
  options:
    '-c hnsw.ef_search=' +
    (process.env.EF ?? '100') +
    ' -c hnsw.iterative_scan=relaxed_order' +
    (process.env.MODE ? ' -c plan_cache_mode=' + process.env.MODE : ''),
});
await client.connect();
const k = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url }) }) });
const qs = readFileSync('../shared/bench/locomo/queries.jsonl', 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l).question as string);
const vec = process.argv.includes('--vec');
const named = process.argv.includes('--named');
const nb = Number(process.env.NB ?? 0.4);
const times: number[] = [];
for (let i = 0; i < 140; i++) {
  const q = qs[(i * 7919) % qs.length]!;
  const p: SearchParams = {
    query: q,
    filters: { project: `bench ${i % 17}` },
    limit: 10,
    k: 30,
    weights: { vector: 1, keyword: 1, neighbours: nb },
    vector: vec ? { values: FakeOllama.vector(q), model: 'nomic-embed-text', dims: 768 } : undefined,
  };
  const c0 = hybridSearchSql(p).compile(k);
  const c = process.env.HALF ? { ...c0, sql: c0.sql.replaceAll('::vector(768)', '::halfvec(768)') } : c0;
  const t = performance.now();
  await client.query(
    named
      ? { name: 'search' + (vec ? 'v' : 'k'), text: c.sql, values: c.parameters as any[] }
      : { text: c.sql, values: c.parameters as any[] },
  );
  if (i >= 40) times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
console.log(
  `vec=${vec} named=${named} mode=${process.env.MODE ?? 'auto'} ef=${process.env.EF ?? 100} nb=${nb}`,
  'p50',
  times[49]!.toFixed(1),
  'p95',
  times[94]!.toFixed(1),
);
await client.end();
await k.destroy();
