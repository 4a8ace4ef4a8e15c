// Migration 0021 on embedded PGlite: a store of N memories with 768-D vectors in their rows (schema at
// 0020, as a store made before the upgrade), then the time of migration 0021 alone.
// Usage: tsx bench/research/pglite-0021.ts [memories]   (a scratch data directory, removed after)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDb } from '../../src/db/client.js';
import { loadMigrations, migrate } from '../../src/db/migrate.js';
import { vectorLiteral } from '../../src/db/vector-literal.js';
import { FakeOllama } from '../../support/fake-ollama.js';

const n = Number(process.argv[2] ?? 10_000);
const dataDir = await mkdtemp(join(tmpdir(), 'pglite-0021-'));
const db = await openDb({ dataDir });
try {
  const all = await loadMigrations();
  await migrate(
    db.kysely,
    all.filter((m) => m.version < 21),
  );
  await sql`insert into intervention_plans (id, title, expected_outcome) values ('00000000000a', 'Bench', 'x')`.execute(
    db.kysely,
  );
  const t0 = performance.now();
  for (let start = 0; start < n; start += 500) {
    const rows = Array.from({ length: Math.min(500, n - start) }, (_, k) => {
      const i = start + k;
      const content = `memory ${i} about topic ${i % 97} and module ${i % 31}`;
      return sql`(${i.toString(16).padStart(12, '0')}, '00000000000a', ${content}, 'context', 'text', 0.5, ${String(i)},
                  ${vectorLiteral(FakeOllama.vector(content, 768, true))}::halfvec, 'nomic-embed-text', 768)`;
    });
    await sql`insert into semantic_memory (id, project_id, content, content_type, content_format, importance_score,
                                           content_hash, embedding, embedding_model, embedding_dims)
              values ${sql.join(rows)}`.execute(db.kysely);
  }
  console.log(`${n} memories with vectors at 0020: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const t1 = performance.now();
  const report = await migrate(db.kysely, all);
  console.log(`${report.applied.join(', ')}: ${((performance.now() - t1) / 1000).toFixed(1)} s`);
} finally {
  await db.close();
  await rm(dataDir, { recursive: true, force: true });
}
