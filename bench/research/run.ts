// usage: npx tsx bench/research/run.ts [regex-of-variant-names]
import { evaluate, row, header } from './harness.ts';
import { V } from './variants.ts';
const re = new RegExp(process.argv[2] ?? '.');
console.log(header);
for (const [name, sql] of Object.entries(V)) {
  if (!re.test(name)) continue;
  const m = await evaluate(sql);
  console.log(row(name, m));
}
