import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { hybridSearchSql } from '../../src/db/queries/memories/hybrid-search.js';
import { FakeOllama } from '../../support/fake-ollama.js';
const client = new pg.Client({ connectionString: process.env.DATABASE_URL! });
await client.connect();
const kysely = new Kysely<any>({
  dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL! }) }),
});
const q = 'When did Caroline go to the LGBTQ support group?';
for (const vec of [false, true]) {
  const p = {
    query: q,
    filters: { project: 'bench 3' },
    limit: 10,
    k: 30,
    weights: { vector: 1, keyword: 1, neighbours: 0.4 },
    vector: vec ? { values: FakeOllama.vector(q, 768, true), model: 'nomic-embed-text', dims: 768 } : undefined,
  };
  const c = hybridSearchSql(p as any).compile(kysely);
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const r = await client.query({
      text: 'explain (summary, format json) ' + c.sql,
      values: c.parameters as unknown[],
    });
    times.push(r.rows[0]['QUERY PLAN'][0]['Planning Time']);
  }
  times.sort((a, b) => a - b);
  console.log(vec ? 'hybrid' : 'keyword', 'planning ms median', times[7]);
}
await client.end();
await kysely.destroy();
