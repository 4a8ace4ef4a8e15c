// Give the scratch LoCoMo table a realistic created_at: corpus (= time) order, 1 minute apart.
import pg from 'pg';
import fs from 'node:fs';
import { DB } from './harness.ts';
const ids = fs
  .readFileSync('/work/shared/bench/locomo/corpus.jsonl', 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l).id);
const c = new pg.Client(DB);
await c.connect();
await c.query(
  `UPDATE semantic_memory m SET created_at = timestamptz '2023-01-01' + make_interval(mins => o.i::int) FROM unnest($1::text[]) WITH ORDINALITY o(id, i) WHERE m.id = o.id`,
  [ids],
);
await c.query('ANALYZE semantic_memory');
await c.end();
