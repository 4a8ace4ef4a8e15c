import { readFileSync } from 'node:fs';
import { FakeOllama } from '../../support/fake-ollama.js';
import { startService } from '../lib/child.js';
const fake = await new FakeOllama().start();
fake.dense = true;
const svc = await startService({
  cwd: process.cwd(),
  env: {
    DATABASE_URL: process.env.DATABASE_URL!,
    LOG_LEVEL: 'warn',
    EMBEDDING_PROVIDER: 'ollama',
    OLLAMA_HOST: fake.url,
    OLLAMA_EMBEDDING_MODEL: 'nomic-embed-text',
  },
});
const qs = readFileSync('../shared/bench/locomo/queries.jsonl', 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l).question as string);
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
const times: number[] = [];
for (let i = 0; i < 230; i++) {
  const c = i % 17;
  const r = await fetch(`${svc.url}/api/v1/memories/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: dialect(qs[(i * 7919) % qs.length]!, c), project: `bench ${c}` }),
  });
  const t = r.headers.get('server-timing') ?? '';
  await r.json();
  const op = Number(/op;dur=([\d.]+)/.exec(t)?.[1]);
  const em = Number(/embed;dur=([\d.]+)/.exec(t)?.[1] ?? 0);
  if (i >= 30) times.push(op - em);
  if (op - em > 40) console.log(`slow #${i} ${(op - em).toFixed(0)} ms at ${(performance.now() / 1000).toFixed(1)} s`);
}
times.sort((a, b) => a - b);
console.log('server p50', times[100]!.toFixed(1), 'p95', times[190]!.toFixed(1), 'max', times[199]!.toFixed(1));
await svc.stop();
await fake.stop();
