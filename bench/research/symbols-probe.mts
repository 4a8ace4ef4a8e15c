// find_symbols scores for a query over the ky graph (PGlite, in process): node, rank, exact.
import { createReadStream } from 'node:fs';
import { openDb } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { findSymbols } from '../../src/db/queries/graphs/find-symbols.js';
import { queryWords } from '../../src/domain/graphs/find-symbols.js';
import { uploadGraph } from '../../src/domain/graphs/upload-graph.js';
const db = await openDb({ dataDir: 'memory://' });
await migrate(db.kysely);
const up = await uploadGraph(
  { db: db.kysely, caller: { name: null, scopes: new Set(['read', 'write', 'admin']) }, retention: 20 },
  { repo: 'ky' },
  [createReadStream('../shared/fixtures/graphs/ky/3419113b48e034fdcf8fa6bd3be3da7b3d0d758f.json')],
);
for (const query of process.argv.slice(2)) {
  const rows = await findSymbols(db.kysely, up, { query, words: queryWords(query), prose: query, limit: 8 });
  console.log(`== ${query} (${queryWords(query)})`);
  for (const r of rows) console.log(r.rank.toFixed(3), r.exact ? 'EXACT' : '     ', r.node_id);
}
const s = await db.kysely
  .selectFrom('graph_nodes')
  .select(['node_id', 'search'])
  .where('node_id', 'in', ['source/utils/merge.ts::mergeHeaders', 'source/utils/merge.ts::mergeHeaderContainers'])
  .execute();
console.log(s);
await db.close();
