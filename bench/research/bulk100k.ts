import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { openDb } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { vectorLiteral } from '../../src/db/queries/memories.js';
import { findOrCreatePlan } from '../../src/db/queries/plans.js';
import { compactKeywordStats } from '../../src/db/queries/keyword-stats.js';
import { contentHash } from '../../src/domain/memory/classify.js';
import { newId } from '../../src/domain/ids.js';
import { FakeOllama } from '../../support/fake-ollama.js';

const STOP = new Set(
  'a about above after again against all am an and any are as at be because been before being below between both but by can did do does doing down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these they this those through to too under until up very was we were what when where which while who whom why will with you your yours yourself yourselves'.split(
    ' ',
  ),
);
const db = await openDb({ databaseUrl: process.env.DATABASE_URL! });
await migrate(db.kysely);
const n = Number(process.argv[2] ?? 100000);
const turns = readFileSync('../shared/bench/locomo/corpus.jsonl', 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));
const types = ['code', 'documentation', 'context', 'output', 'error', 'decision', 'learning'] as const;
const t0 = performance.now();
const projects = new Map<string, string>();
let batch: any[] = [];
const flush = async () => {
  if (!batch.length) return;
  await db.kysely
    .insertInto('semantic_memory')
    .values(batch)
    .onConflict((oc) => oc.doNothing())
    .execute();
  batch = [];
};
for (let i = 0; i < n; i++) {
  const turn = turns[i % turns.length];
  const copy = Math.floor(i / turns.length);
  const project = `bench ${copy}`;
  if (!projects.has(project))
    projects.set(project, (await findOrCreatePlan(db.kysely, { id: newId(), title: project, createdBy: null })).id);
  const content =
    copy === 0
      ? turn.content
      : turn.content.replace(/[A-Za-z]{2,}/g, (w: string) =>
          STOP.has(w.toLowerCase())
            ? w
            : w + String.fromCharCode(97 + (copy % 26), 97 + (Math.floor(copy / 26) % 26), 122),
        );
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
  });
  if (batch.length === 500) await flush();
  if (i % 10000 === 9999) console.log(i + 1, ((performance.now() - t0) / 1000).toFixed(1), 's');
}
await flush();
console.log('folded', await compactKeywordStats(db.kysely));
await sql`vacuum analyze`.execute(db.kysely);
await db.close();
