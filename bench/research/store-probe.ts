// Times the service's store path at SQL level (findDuplicate + insertMemory), one at a time.
import { readFileSync } from 'node:fs';
import { openDb } from '../../src/db/client.js';
import { findDuplicate, insertMemory } from '../../src/db/queries/memories.js';
import { contentHash } from '../../src/domain/memory/classify.js';
import { newId } from '../../src/domain/ids.js';
import { FakeOllama } from '../../support/fake-ollama.js';
const db = await openDb({ databaseUrl: process.env.DATABASE_URL! });
const turns = readFileSync('../shared/bench/locomo/corpus.jsonl', 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l).content as string);
const n = Number(process.argv[2] ?? 300);
const tag = Date.now().toString(36);
const times: number[] = [];
const dup: number[] = [];
for (let i = 0; i < n + 20; i++) {
  const content = `${turns[(i * 31) % turns.length]} (probe ${tag} ${i})`;
  const vector = FakeOllama.vector(content, 768, true);
  const hash = contentHash(content);
  const t0 = performance.now();
  await findDuplicate(db.kysely, `bench ${i % 17}`, hash);
  const t1 = performance.now();
  const r = await insertMemory(db.kysely, {
    id: newId(),
    project: `bench ${i % 17}`,
    task_id: null,
    content,
    content_type: 'decision',
    content_format: 'text',
    keywords: ['bench', `n${i % 10}`],
    importance_score: 0.5,
    content_hash: hash,
    source: 'probe',
    created_by: null,
    embedding: { vector, model: 'nomic-embed-text', dims: 768 },
    enqueue: false,
  });
  const t2 = performance.now();
  if (r.kind !== 'inserted') throw new Error(r.kind);
  if (i >= 20) {
    times.push(t2 - t0);
    dup.push(t1 - t0);
  }
}
const q = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.floor(a.length * p)]!.toFixed(2);
console.log(
  'store p50',
  q(times, 0.5),
  'p95',
  q(times, 0.95),
  'p99',
  q(times, 0.99),
  'max',
  q(times, 0.999),
  '| dup check p50',
  q(dup, 0.5),
  'p95',
  q(dup, 0.95),
);
await db.close();
