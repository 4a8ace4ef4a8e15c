import { readFileSync } from 'node:fs';
import { openDb, runPrepared } from '../../src/db/client.js';
import { hybridSearchSql, type SearchParams } from '../../src/db/queries/memories.js';
import { FakeOllama } from '../../support/fake-ollama.js';
const db = await openDb({ databaseUrl: process.env.DATABASE_URL! });
const qs = readFileSync('../shared/bench/locomo/queries.jsonl', 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l).question as string);
const copies = Number(process.env.COPIES ?? 3);
const STOP = new Set(
  'a about above after again against all am an and any are as at be because been before being below between both but by can did do does doing down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these they this those through to too under until up very was we were what when where which while who whom why will with you your yours yourself yourselves'.split(
    ' ',
  ),
);
const dialect = (t: string, c: number) =>
  c === 0
    ? t
    : t.replace(/[A-Za-z]{2,}/g, (w) =>
        STOP.has(w.toLowerCase()) ? w : w + String.fromCharCode(97 + (c % 26), 97 + (Math.floor(c / 26) % 26), 122),
      );
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
        ? {
            values: FakeOllama.vector(q, 768, true),
            model: 'nomic-embed-text',
            dims: 768,
            exact: process.env.EXACT === '1',
          }
        : undefined,
    };
    const t = performance.now();
    await runPrepared(db.kysely, hybridSearchSql(p).compile(db.kysely));
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
