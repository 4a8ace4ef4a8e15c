// Evaluate a statement file (default winner2.sql) on LoCoMo (project-scoped, no other filters) + edge-case inputs.
import { evaluate, row, header, DB } from './harness.js';
import fs from 'node:fs';
import pg from 'pg';
const sql = fs.readFileSync(new URL('./' + (process.argv[2] ?? 'winner2.sql'), import.meta.url), 'utf8');
console.log(header);
console.log(row('winner', await evaluate(sql, { extra: () => [null, null, null, null] })));
const c = new pg.Client(DB);
await c.connect();
c.on('notice', (n) => console.log('   NOTICE:', n.message));
const edge = [
  '',
  '   ',
  'the and of what did',
  '?!?',
  ':::',
  '&&&',
  "'",
  "''",
  '\\',
  '\\\\',
  "it's",
  "Caroline's",
  'a:*',
  'foo & bar | !baz',
  '(((',
  '"unterminated',
  "o'reilly \\ back\\slash: c++ & c#",
  'x'.repeat(3000),
  'self-care LGBTQ+ http://example.com/a?b=1&c=2 foo@bar.com /usr/local/bin',
  'Ünïcødé café naïve 東京',
  'paint:A sunrise*',
  '-paint',
  'NULL',
  "melanie' | 'x",
];
for (const q of edge) {
  try {
    const r = await c.query(sql, [q, 'conv-26', 30, null, null, null, null]);
    console.log(JSON.stringify(q.slice(0, 60)), '->', r.rowCount, r.rows[0]?.id ?? '');
  } catch (e: any) {
    console.log(JSON.stringify(q.slice(0, 60)), 'ERROR', e.message);
  }
}
// unscoped + filters compile
const r = await c.query(sql, ['painting sunrise', null, 30, ['conversation'], '2000-01-01', '2100-01-01', null]);
console.log('unscoped+filters ->', r.rowCount);
const r2 = await c.query(sql, ['painting sunrise', 'conv-26', 30, null, null, null, ['x']]);
console.log('keywords filter ->', r2.rowCount);
await c.end();
