// The speed bench's measurement phase (search cases and single stores, server timing without the
// embed call) against an already loaded DATABASE_URL (e.g. after bulk100k.ts): minutes, not a reload.
import { FakeOllama } from '../../support/fake-ollama.js';
import { startService } from '../lib/child.js';
import { dialect, readLocomo } from '../lib/locomo.js';
const fake = await new FakeOllama().start();
fake.dense = true;
const env = {
  DATABASE_URL: process.env.DATABASE_URL!,
  LOG_LEVEL: 'warn',
  EMBEDDING_PROVIDER: 'ollama',
  OLLAMA_HOST: fake.url,
  OLLAMA_EMBEDDING_MODEL: 'nomic-embed-text',
};
const hybrid = await startService({ cwd: process.cwd(), env });
const keyword = await startService({ cwd: process.cwd(), env: { ...env, EMBEDDING_PROVIDER: 'none' } });
const qs = (await readLocomo()).questions.map((q) => q.question);
const TYPES = ['code', 'documentation', 'context', 'output', 'error', 'decision', 'learning'];
const q = (i: number) => dialect(qs[(i * 7919) % qs.length]!, i % 17);
const cases: Array<[string, (i: number) => object]> = [
  ['project', (i) => ({ query: q(i), project: `bench ${i % 17}` })],
  ['project+type', (i) => ({ query: q(i), project: `bench ${i % 17}`, content_type: TYPES[i % 7] })],
  ['all', (i) => ({ query: q(i) })],
  [
    'all+type+since',
    (i) => ({
      query: q(i),
      content_type: TYPES[i % 7],
      created_after: new Date(Date.now() - 86_400_000).toISOString(),
    }),
  ],
];
const only = process.argv[2] ? new RegExp(process.argv[2]) : null;
const pct = (xs: number[], p: number) => xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const report = (name: string, xs: number[]) =>
  console.log(
    name.padEnd(24),
    'p50',
    pct(xs, 0.5).toFixed(1),
    'p95',
    pct(xs, 0.95).toFixed(1),
    'max',
    pct(xs, 1).toFixed(1),
  );
async function timed(url: string, path: string, body: object) {
  const r = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const t = r.headers.get('server-timing') ?? '';
  await r.json();
  return Number(/op;dur=([\d.]+)/.exec(t)?.[1]) - Number(/embed;dur=([\d.]+)/.exec(t)?.[1] ?? 0);
}
for (const [svcName, svc] of [
  ['hybrid', hybrid],
  ['keyword', keyword],
] as const) {
  for (const [name, body] of cases) {
    if (only && !only.test(`${svcName} ${name}`)) continue;
    const xs: number[] = [];
    for (let i = 0; i < 330; i++) {
      const ms = await timed(svc.url, '/api/v1/memories/search', body(i));
      if (i >= 30) xs.push(ms);
    }
    report(`${svcName} ${name}`, xs);
  }
}
if (!only || only.test('store')) {
  const xs: number[] = [];
  for (let i = 0; i < 320; i++) {
    const ms = await timed(hybrid.url, '/api/v1/memories', {
      content: dialect(`${qs[(i * 31) % qs.length]} (probe note ${Date.now()} ${i})`, i % 17),
      content_type: TYPES[i % 7],
      keywords: ['bench', `n${i % 10}`],
      project: `bench ${i % 17}`,
    });
    if (i >= 20) xs.push(ms);
  }
  report('store', xs);
}
await hybrid.stop();
await keyword.stop();
await fake.stop();
