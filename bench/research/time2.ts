import { openDb } from '../../src/db/client.js';
import { hybridSearchSql } from '../../src/db/queries/memories/hybrid-search.js';
import type { SearchParams } from '../../src/db/queries/memories/search-params.js';
import { FakeOllama } from '../../support/fake-ollama.js';
import { dialect, readLocomo } from '../lib/locomo.js';
const db = await openDb({ databaseUrl: process.env.DATABASE_URL! });
const qs = (await readLocomo()).questions.map((q) => q.question);
const copies = Number(process.env.COPIES ?? 3);
const nb = Number(process.env.NB ?? 0.4);
for (const mode of (process.env.MODES ?? 'kw_project,kw_all,hy_project,hy_all,hy_type').split(',')) {
  const times: number[] = [];
  const slow: Array<[number, string]> = [];
  for (let i = 0; i < 140; i++) {
    const c = i % copies;
    const q = dialect(qs[(i * 7919) % qs.length]!, c);
    const p: SearchParams = {
      query: q,
      filters: mode.endsWith('project')
        ? { project: `bench ${c}` }
        : mode === 'hy_type'
          ? { content_type: 'decision', created_after: '2000-01-01T00:00:00Z' }
          : {},
      limit: 10,
      k: 30,
      weights: { vector: 1, keyword: 1, neighbours: nb },
      vector: mode.startsWith('hy')
        ? { values: FakeOllama.vector(q, 768, true), model: 'nomic-embed-text', dims: 768 }
        : undefined,
    };
    const t = performance.now();
    await hybridSearchSql(p).execute(db.kysely);
    const e = performance.now() - t;
    if (i >= 40) {
      times.push(e);
      slow.push([e, q]);
    }
  }
  times.sort((a, b) => a - b);
  slow.sort((a, b) => b[0] - a[0]);
  console.log(
    mode.padEnd(12),
    'p50',
    times[49]!.toFixed(1),
    'p95',
    times[94]!.toFixed(1),
    '| slowest:',
    slow[0]![0].toFixed(0),
    slow[0]![1].slice(0, 70),
  );
}
await db.close();
