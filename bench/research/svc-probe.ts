import { FakeOllama } from '../../support/fake-ollama.js';
import { startService } from '../lib/child.js';
import { dialect, readLocomo } from '../lib/locomo.js';
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
const qs = (await readLocomo()).questions.map((q) => q.question);
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
