// Build a ~100k-row copy: 17 projects, each a lightly perturbed copy of the whole LoCoMo corpus,
// with a content_type mix and created_at spread over two years. DB: kwresearch100k.
import pg from 'pg';
import fs from 'node:fs';
const DB = process.env.DB100K ?? 'postgres://postgres@127.0.0.1:54329/kwresearch100k';
const c = new pg.Client(DB);
await c.connect();
await c.query(fs.readFileSync(new URL('./schema.sql', import.meta.url), 'utf8'));
const rows = fs
  .readFileSync('/work/shared/bench/locomo/corpus.jsonl', 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));
let seed = 42;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const types = ['conversation', 'conversation', 'decision', 'note', 'code', 'conversation', 'note'];
const fillers = ['honestly', 'anyway', 'btw', 'really', 'update', 'today', 'also'];
for (let p = 0; p < 17; p++) {
  const b = rows.map((r) => {
    let content: string = r.content;
    if (p > 0) {
      const w = content.split(' ');
      if (rnd() < 0.3 && w.length > 4) w.splice(1 + Math.floor(rnd() * (w.length - 1)), 1); // drop a word
      if (rnd() < 0.3) w.push(fillers[Math.floor(rnd() * fillers.length)]); // add a filler
      content = w.join(' ');
    }
    return {
      id: `p${p}:${r.id}`,
      project: `p${p}`,
      content,
      type: types[Math.floor(rnd() * types.length)],
      at: new Date(Date.UTC(2023, 0, 1) + Math.floor(rnd() * 730 * 86400e3)).toISOString(),
    };
  });
  for (let i = 0; i < b.length; i += 1000) {
    const s = b.slice(i, i + 1000);
    await c.query(
      `INSERT INTO semantic_memory (id, project_id, content, content_type, created_at)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])`,
      [s.map((x) => x.id), s.map((x) => x.project), s.map((x) => x.content), s.map((x) => x.type), s.map((x) => x.at)],
    );
  }
}
await c.query('VACUUM ANALYZE semantic_memory');
console.log(
  (
    await c.query(
      `select count(*), count(distinct project_id) p, pg_size_pretty(pg_total_relation_size('semantic_memory')) sz from semantic_memory`,
    )
  ).rows[0],
);
await c.end();
