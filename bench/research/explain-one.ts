import { sql } from 'kysely';
import { openDb } from '../../src/db/client.js';
import { hybridSearchSql } from '../../src/db/queries/memories.js';
import { FakeOllama } from '../../support/fake-ollama.js';
const db = await openDb({ databaseUrl: process.env.DATABASE_URL! });
const q = process.argv[2] ?? 'When did Caroline go to the LGBTQ support group?';
const p = {
  query: q,
  filters: {
    ...(process.argv[3] === 'all' ? {} : { project: process.argv[3] ?? 'bench 3' }),
    ...(process.env.TYPE ? { content_type: process.env.TYPE, created_after: '2000-01-01T00:00:00Z' } : {}),
  },
  limit: 10,
  k: 30,
  weights: { vector: 1, keyword: 1, neighbours: Number(process.env.NB ?? 0.4) },
  vector: process.argv.includes('--vec')
    ? { values: FakeOllama.vector(q, 768, true), model: 'nomic-embed-text', dims: 768 }
    : undefined,
};
const c = hybridSearchSql(p as any).compile(db.kysely);
await db.kysely.transaction().execute(async (trx) => {
  await sql`select set_config('hnsw.ef_search', '100', true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`.execute(
    trx,
  );
  await trx.executeQuery(c);
  const plan = await trx.executeQuery({ ...c, sql: 'explain (analyze, buffers) ' + c.sql } as any);
  console.log((plan.rows as any[]).map((r) => r['QUERY PLAN']).join('\n'));
});
await db.close();
