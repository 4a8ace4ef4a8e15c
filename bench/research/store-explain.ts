import pg from 'pg';
import { FakeOllama } from '../../support/fake-ollama.js';
const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
await c.connect();
const pid = (await c.query(`select id from intervention_plans where title = 'bench 4'`)).rows[0].id;
for (let i = 0; i < 5; i++) {
  const content = `Explain probe ${Date.now()} ${i}: I went to the support group yesterday and it was really powerful for me.`;
  const v = `[${FakeOllama.vector(content, 768, true).join(',')}]`;
  await c.query('begin');
  const t = performance.now();
  const r = await c.query(
    `explain (analyze, buffers, wal) insert into semantic_memory (id, project_id, content, content_type, content_format, keywords, importance_score, content_hash, source, embedding, embedding_model, embedding_dims)
    values (substr(md5(random()::text), 1, 12), $1, $2, 'decision', 'text', '{bench,n1}', 0.5, md5($2), 'probe', $3::vector, 'nomic-embed-text', 768)`,
    [pid, content, v],
  );
  const t2 = performance.now();
  await c.query('commit');
  const t3 = performance.now();
  if (i >= 3)
    console.log(
      r.rows.map((x) => x['QUERY PLAN']).join('\n'),
      `\nstatement ${(t2 - t).toFixed(1)} ms, commit ${(t3 - t2).toFixed(1)} ms`,
    );
}
await c.end();
