// Load LoCoMo corpus into scratch DB: one project per conversation.
import pg from 'pg';
import { readLocomo } from '../lib/locomo.js';
import fs from 'node:fs';
const DB = process.env.DB ?? 'postgres://postgres@127.0.0.1:54329/kwresearch';
const c = new pg.Client(DB);
await c.connect();
await c.query(fs.readFileSync(new URL('./schema.sql', import.meta.url), 'utf8'));
const rows = (await readLocomo()).turns;
const ids = new Set<string>();
for (let i = 0; i < rows.length; i += 500) {
  const b = rows.slice(i, i + 500);
  await c.query(
    `INSERT INTO semantic_memory (id, project_id, content, content_type)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])`,
    [b.map((r) => r.id), b.map((r) => r.conv), b.map((r) => r.content), b.map(() => 'conversation')],
  );
  b.forEach((r) => ids.add(r.id));
}
await c.query('ANALYZE semantic_memory');
console.log('loaded', ids.size, (await c.query('select max(length(id)) m from semantic_memory')).rows[0]);
await c.end();
