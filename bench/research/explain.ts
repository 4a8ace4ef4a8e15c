import pg from 'pg';
import fs from 'node:fs';
const sql = fs.readFileSync(new URL('./' + process.argv[2], import.meta.url), 'utf8');
const c = new pg.Client('postgres://postgres@127.0.0.1:54329/kwresearch100k');
await c.connect();
const r = await c.query('EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ' + sql, [
  process.argv[3],
  process.argv[4] === 'null' ? null : process.argv[4],
  30,
  null,
  null,
  null,
  null,
]);
console.log(r.rows.map((x) => x['QUERY PLAN']).join('\n'));
await c.end();
