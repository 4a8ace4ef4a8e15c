// LoCoMo metrics of the keyword-branch variants whose names match a regex (variants.ts: ts_rank /
// ts_rank_cd normalisations, AND-first, BM25 forms; variants2.ts: x_* extensions of BM25+).
// usage: npx tsx bench/research/run.ts [regex-of-variant-names]
import { evaluate, row, header } from './harness.js';
import { V } from './variants.js';
import { W } from './variants2.js';
const re = new RegExp(process.argv[2] ?? '.');
console.log(header);
for (const [name, sql] of Object.entries({ ...V, ...W }))
  if (re.test(name)) console.log(row(name, await evaluate(sql)));
