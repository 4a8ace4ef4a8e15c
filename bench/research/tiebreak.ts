// Try to reproduce the reference baseline (0.596 / 0.465) with different tie-breaks.
import { evaluate, row, header } from './harness.ts';
import { V } from './variants.ts';
console.log(header);
const base = V['or_tsrank0'];
const tb: Record<string, string> = {
  id: base,
  ctid: base
    .replaceAll('ORDER BY r DESC, m.id', 'ORDER BY r DESC, m.ctid')
    .replace('ORDER BY r DESC, id', 'ORDER BY r DESC'),
  none: base.replaceAll('ORDER BY r DESC, m.id', 'ORDER BY r DESC').replace('ORDER BY r DESC, id', 'ORDER BY r DESC'),
  k10: base,
};
for (const [n, s] of Object.entries(tb))
  console.log(row('tiebreak_' + n, await evaluate(s, n === 'k10' ? { k: 10 } : {})));
