// The store path at SQL level with the WAL each store writes (full-page images after a checkpoint).
// Usage: DATABASE_URL=… tsx bench/research/store-wal.ts [n] [--checkpoint]
import { sql } from 'kysely';
import { openDb } from '../../src/db/client.js';
import { findDuplicate } from '../../src/db/queries/memories/find-duplicate.js';
import { insertMemory } from '../../src/db/queries/memories/insert-memory.js';
import { contentHash } from '../../src/domain/memory/classify.js';
import { newId } from '../../src/domain/ids.js';
import { FakeOllama } from '../../support/fake-ollama.js';
import { readLocomo } from '../lib/locomo.js';
const db = await openDb({ databaseUrl: process.env.DATABASE_URL! });
const turns = (await readLocomo()).turns.map((t) => t.content);
const n = Number(process.argv[2] ?? 300);
if (process.argv.includes('--checkpoint')) await sql`checkpoint`.execute(db.kysely);
const withVector = !process.argv.includes('--no-vector');
const tag = Date.now().toString(36);
const times: number[] = [];
const wal: number[] = [];
const lsn = async () =>
  (await sql<{ l: string }>`select pg_current_wal_insert_lsn()::text as l`.execute(db.kysely)).rows[0]!.l;
const bytes = (l: string) => {
  const [h, lo] = l.split('/');
  return parseInt(h!, 16) * 2 ** 32 + parseInt(lo!, 16);
};
for (let i = 0; i < n; i++) {
  const content = `${turns[(i * 31) % turns.length]} (probe ${tag} ${i})`;
  const vector = FakeOllama.vector(content, 768, true);
  const hash = contentHash(content);
  const before = bytes(await lsn());
  const t0 = performance.now();
  await findDuplicate(db.kysely, `bench ${i % 17}`, hash);
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
    embedding: withVector ? { vector, model: 'nomic-embed-text', dims: 768 } : null,
    enqueue: false,
  });
  const t2 = performance.now();
  wal.push(bytes(await lsn()) - before);
  if (r.kind !== 'inserted') throw new Error(r.kind);
  times.push(t2 - t0);
}
const q = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.floor(a.length * p)]!;
console.log(
  'store ms p50',
  q(times, 0.5).toFixed(2),
  'p95',
  q(times, 0.95).toFixed(2),
  '| WAL KB p50',
  (q(wal, 0.5) / 1024).toFixed(1),
  'p95',
  (q(wal, 0.95) / 1024).toFixed(1),
  'first 50 mean',
  (wal.slice(0, 50).reduce((a, b) => a + b, 0) / 50 / 1024).toFixed(1),
  'last 50 mean',
  (wal.slice(-50).reduce((a, b) => a + b, 0) / 50 / 1024).toFixed(1),
);
await db.close();
