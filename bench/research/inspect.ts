// Print some misses for a variant: npx tsx bench/research/inspect.ts variant [n]
import { evaluate } from './harness.ts';
import { V } from './variants.ts';
import fs from 'node:fs';
const corpus = new Map(
  fs
    .readFileSync('/work/shared/bench/locomo/corpus.jsonl', 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .map((r: any) => [r.id, r.content]),
);
const m = await evaluate(V[process.argv[2]]);
const miss = m.results.filter((r) => !r.ranked.slice(0, 10).some((id) => r.q.evidence.includes(id)));
for (const r of miss.filter((_, i) => i % 17 === 0).slice(0, +(process.argv[3] ?? 12))) {
  console.log(`\n[c${r.q.category}] Q: ${r.q.question}`);
  for (const e of r.q.evidence) console.log('   EV:', corpus.get(e)?.slice(0, 160), ' rank=', r.ranked.indexOf(e));
  console.log('   TOP1:', corpus.get(r.ranked[0])?.slice(0, 160));
}
