import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { openDb } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { hybridSearchSql, insertMemory } from '../../src/db/queries/memories.js';
import { findOrCreatePlan } from '../../src/db/queries/plans.js';
import { contentHash } from '../../src/domain/memory/classify.js';
import { newId } from '../../src/domain/ids.js';
import { FakeOllama } from '../../support/fake-ollama.js';

const url = process.env.DATABASE_URL!;
const n = Number(process.argv[2] ?? 10000);
const db = await openDb({ databaseUrl: url });
await migrate(db.kysely);
const turns = readFileSync('../shared/bench/locomo/corpus.jsonl', 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));
const existing = Number(
  (await sql<{ c: number }>`select count(*)::int as c from semantic_memory`.execute(db.kysely)).rows[0]!.c,
);
const types = ['code', 'documentation', 'context', 'output', 'error', 'decision', 'learning'] as const;
let t0 = performance.now();
for (let i = existing; i < n; i++) {
  const turn = turns[i % turns.length];
  const copy = Math.floor(i / turns.length);
  const project = `bench ${copy}`;
  if (i % turns.length === 0) await findOrCreatePlan(db.kysely, { id: newId(), title: project, createdBy: null });
  const content = copy === 0 ? turn.content : `${turn.content} [${copy}]`;
  await insertMemory(db.kysely, {
    id: newId(),
    project,
    task_id: null,
    content,
    content_type: types[i % 7]!,
    content_format: 'text',
    keywords: [],
    importance_score: 0.5,
    content_hash: contentHash(content),
    source: 'bench',
    created_by: null,
    embedding: { vector: FakeOllama.vector(content), model: 'nomic-embed-text', dims: 768 },
    enqueue: false,
  });
  if (i % 1000 === 999) {
    console.log(i + 1, ((performance.now() - t0) / 1000).toFixed(1), 's');
  }
}
await sql`vacuum analyze semantic_memory`.execute(db.kysely).catch(() => {});
const q = process.argv[3] ?? 'When did Caroline go to the LGBTQ support group?';
const params = {
  query: q,
  filters: { project: process.argv[4] ?? 'bench 0' },
  limit: 10,
  k: 30,
  weights: { vector: 1, keyword: 1, neighbours: 0.4 },
  vector: process.argv.includes('--vec')
    ? { values: FakeOllama.vector(q), model: 'nomic-embed-text', dims: 768 }
    : undefined,
};
const compiled = hybridSearchSql(params).compile(db.kysely);
await db.kysely.transaction().execute(async (trx) => {
  await sql`select set_config('hnsw.ef_search', '100', true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`.execute(
    trx,
  );
  for (let i = 0; i < 3; i++) await trx.executeQuery(compiled);
  t0 = performance.now();
  for (let i = 0; i < 10; i++) await trx.executeQuery(compiled);
  console.log('avg ms', ((performance.now() - t0) / 10).toFixed(2));
  const plan = await trx.executeQuery({ ...compiled, sql: 'explain (analyze, buffers) ' + compiled.sql } as any);
  console.log((plan.rows as any[]).map((r) => r['QUERY PLAN']).join('\n'));
});
await db.close();
