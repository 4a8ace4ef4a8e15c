// Give the scratch LoCoMo table a realistic created_at: corpus (= time) order, 1 minute apart.
import pg from 'pg';
import { readLocomo } from '../lib/locomo.js';
import { DB } from './harness.js';
const ids = (await readLocomo()).turns.map((t) => t.id);
const c = new pg.Client(DB);
await c.connect();
await c.query(
  `UPDATE semantic_memory m SET created_at = timestamptz '2023-01-01' + make_interval(mins => o.i::int) FROM unnest($1::text[]) WITH ORDINALITY o(id, i) WHERE m.id = o.id`,
  [ids],
);
await c.query('ANALYZE semantic_memory');
await c.end();
