import { sql } from 'kysely';
import { openDb } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { vectorLiteral } from '../../src/db/vector-literal.js';
import { findOrCreatePlan } from '../../src/db/queries/plans.js';
import { compactKeywordStats } from '../../src/db/queries/keyword-stats.js';
import { contentHash } from '../../src/domain/memory/classify.js';
import { newId } from '../../src/domain/ids.js';
import { FakeOllama } from '../../support/fake-ollama.js';
import { dialect, readLocomo } from '../lib/locomo.js';

const db = await openDb({ databaseUrl: process.env.DATABASE_URL! });
await migrate(db.kysely);
const n = Number(process.argv[2] ?? 100000);
const turns = (await readLocomo()).turns;
const types = ['code', 'documentation', 'context', 'output', 'error', 'decision', 'learning'] as const;
const t0 = performance.now();
const projects = new Map<string, string>();
const seqs = new Map<string, number>();
let batch: any[] = [];
const flush = async () => {
  if (!batch.length) return;
  const rows = batch.map(({ embedding: _, ...row }) => row);
  const inserted = await db.kysely
    .insertInto('semantic_memory')
    .values(rows)
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .execute();
  // Their vectors as the embedding worker stores them (migrations/0021).
  const ids = new Set(inserted.map((r) => r.id));
  const vectors = batch
    .filter((m) => ids.has(m.id))
    .map((m) => ({
      memory_id: m.id,
      project_id: m.project_id,
      content_type: m.content_type,
      created_at: m.created_at,
      embedding_model: m.embedding_model,
      embedding_dims: m.embedding_dims,
      embedding: m.embedding,
    }));
  if (vectors.length > 0) await db.kysely.insertInto('memory_vectors').values(vectors).execute();
  batch = [];
};
for (let i = 0; i < n; i++) {
  const turn = turns[i % turns.length]!;
  const copy = Math.floor(i / turns.length);
  const project = `bench ${copy}`;
  if (!projects.has(project))
    projects.set(project, (await findOrCreatePlan(db.kysely, { id: newId(), title: project, createdBy: null })).id);
  const content = dialect(turn.content, copy);
  // Its place in the project's order of storing, as a store numbers it (migrations/0019).
  const seq = (seqs.get(project) ?? 0) + 1;
  seqs.set(project, seq);
  batch.push({
    id: newId(),
    project_id: projects.get(project),
    task_id: null,
    content,
    content_type: types[i % 7],
    content_format: 'text',
    keywords: [],
    importance_score: 0.5,
    content_hash: contentHash(content),
    source: 'bench',
    created_by: null,
    embedding: vectorLiteral(FakeOllama.vector(content, 768, true)),
    embedding_model: 'nomic-embed-text',
    embedding_dims: 768,
    created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    project_seq: seq,
  });
  if (batch.length === 500) await flush();
  if (i % 10000 === 9999) console.log(i + 1, ((performance.now() - t0) / 1000).toFixed(1), 's');
}
await flush();
console.log('folded', await compactKeywordStats(db.kysely));
await sql`vacuum analyze`.execute(db.kysely);
await db.close();
