// EXPLAIN ANALYZE of find_symbols on Postgres (DATABASE_URL): loads theia and the synthetic 50k graph
// once into the database (LOAD=1), then explains the statement for the queries given.
import { createReadStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { openDb } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { findSymbols } from '../../src/db/queries/graphs/find-symbols.js';
import { symbolQuery } from '../../src/domain/graphs/find-symbols.js';
import { uploadGraph } from '../../src/domain/graphs/upload-graph.js';
const db = await openDb({ databaseUrl: process.env.DATABASE_URL! });
await migrate(db.kysely);
const deps = {
  db: db.kysely,
  caller: { name: null, scopes: new Set(['read', 'write', 'admin']) as any },
  retention: 20,
};
if (process.env.LOAD) {
  const { syntheticGraph } = await import('../graphs.js');
  await writeFile('/tmp/synthetic50k.json.gz', gzipSync(syntheticGraph(50_000)));
  const { createGunzip } = await import('node:zlib');
  await uploadGraph(deps, { repo: 'theia' }, [
    createReadStream(
      '../shared/fixtures/graphs/theia/' +
        (await import('node:fs')).readdirSync('../shared/fixtures/graphs/theia').find((f) => f.endsWith('.gz'))!,
    ),
    createGunzip(),
  ]);
  await uploadGraph(deps, { repo: 'synthetic' }, [createReadStream('/tmp/synthetic50k.json.gz'), createGunzip()]);
  await sql`analyze graph_nodes, graph_edges`.execute(db.kysely);
}
const g = (
  await sql<{
    graph_id: string;
    commit_hash: string;
  }>`select c.graph_id, c.commit_hash from graph_commits c join code_graphs g using (graph_id) where g.repo = 'synthetic'`.execute(
    db.kysely,
  )
).rows[0]!;
const graph = { graphId: g.graph_id, commitHash: g.commit_hash };
await db.kysely.connection().execute(async (conn) => {
  // Plans go to the server log (auto_explain), timings here.
  if (process.env.EXPLAIN)
    (await sql`load 'auto_explain'`.execute(conn),
      await sql`set auto_explain.log_min_duration = 0`.execute(conn),
      await sql`set auto_explain.log_analyze = on`.execute(conn),
      await sql`set auto_explain.log_buffers = on`.execute(conn),
      await sql`set auto_explain.log_nested_statements = on`.execute(conn));
  for (const q of process.argv.slice(2)) {
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      await findSymbols(conn, graph, symbolQuery(q, 10));
      console.log(`== ${q}: ${(performance.now() - t).toFixed(1)} ms`);
    }
  }
});
await db.close();
