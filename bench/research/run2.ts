import { evaluate, row, header } from './harness.ts';
import { W } from './variants2.ts';
const re = new RegExp(process.argv[2] ?? '.');
console.log(header);
for (const [name, sql] of Object.entries(W)) if (re.test(name)) console.log(row(name, await evaluate(sql)));
