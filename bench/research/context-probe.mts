// resolve_context packets over the ky graph (PGlite, in process): prints each packet and its size.
import { createReadStream } from 'node:fs';
import { openDb } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { resolveContext, type Intent } from '../../src/domain/graphs/resolve-context.js';
import { uploadGraph } from '../../src/domain/graphs/upload-graph.js';
const db = await openDb({ dataDir: 'memory://' });
await migrate(db.kysely);
await uploadGraph(
  { db: db.kysely, caller: { name: null, scopes: new Set(['read', 'write', 'admin']) }, retention: 20 },
  { repo: 'ky' },
  [createReadStream('../shared/fixtures/graphs/ky/3419113b48e034fdcf8fa6bd3be3da7b3d0d758f.json')],
);
const [task, intent, budget] = process.argv.slice(2);
const out = await resolveContext(
  { db: db.kysely },
  {
    task: task ?? 'how are retries delayed',
    intent: (intent ?? 'exploratory') as Intent,
    tokenBudget: budget ? Number(budget) : undefined,
  },
);
console.log(out.packet);
console.log('--', out.approxTokens, 'tokens of', out.budget);
await db.close();
