// The embedding worker's move of staged vectors into their rows (a non-HOT update of semantic_memory)
// against inserting the same vectors into a table of their own (id + vector, its own HNSW index):
// time and WAL per batch. Each batch runs in a transaction rolled back after; the scratch table is
// dropped at the end. Usage: DATABASE_URL=… tsx bench/research/move-cost.ts [batch] [batches]
// It needs a store migrated up to 0020 (vectors in semantic_memory): check out dbda92d to run it.
// Migration 0021 made the second way the service's (memory_vectors).
import pg from 'pg';

const batch = Number(process.argv[2] ?? 32);
const batches = Number(process.argv[3] ?? 12);
const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
await client.query('set max_parallel_workers_per_gather = 0');
await client.query('drop table if exists move_cost_vectors');
await client.query(
  `create table move_cost_vectors (memory_id varchar(32) primary key, embedding halfvec(768) not null)`,
);
await client.query(`insert into move_cost_vectors
                    select id, embedding::halfvec(768) from semantic_memory where embedding_dims = 768 and embedding is not null`);
await client.query('create index on move_cost_vectors using hnsw (embedding halfvec_cosine_ops)');
await client.query('analyze move_cost_vectors');

const walNow = async () => (await client.query<{ l: string }>('select pg_current_wal_insert_lsn() as l')).rows[0]!.l;
const walSince = async (from: string, to: string) =>
  (await client.query<{ b: string }>('select pg_wal_lsn_diff($2, $1)::bigint as b', [from, to])).rows[0]!.b;
const figures = { move: [] as number[], insert: [] as number[], moveWal: [] as number[], insertWal: [] as number[] };
try {
  for (let i = 0; i < batches; i++) {
    await client.query('begin');
    // New text-only memories (as a store leaves them), copies of random ones with vectors.
    await client.query(`create temp table src on commit drop as
      select substr(md5(random()::text), 1, 12) as nid, s.* from (
        select * from semantic_memory where embedding_dims = 768 and embedding is not null order by random() limit ${batch}) s`);
    await client.query(`insert into semantic_memory (id, project_id, content, content_type, content_format, keywords,
                          importance_score, content_hash, source, embedding_model, embedding_dims, created_by, project_seq)
      select nid, project_id, content || ' (copy ' || nid || ')', content_type, content_format, keywords,
             importance_score, md5(nid), source, embedding_model, embedding_dims, created_by, project_seq from src`);
    const w0 = await walNow();
    let t = performance.now();
    await client.query('update semantic_memory m set embedding = s.embedding from src s where m.id = s.nid');
    figures.move.push(performance.now() - t);
    const w1 = await walNow();
    t = performance.now();
    await client.query('insert into move_cost_vectors select nid, embedding::halfvec(768) from src');
    figures.insert.push(performance.now() - t);
    const w2 = await walNow();
    figures.moveWal.push(Number(await walSince(w0, w1)));
    figures.insertWal.push(Number(await walSince(w1, w2)));
    await client.query('rollback');
  }
} finally {
  await client.query('drop table if exists move_cost_vectors');
  await client.end();
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
console.log(
  `${batches} batches of ${batch}: move into the rows p50 ${median(figures.move).toFixed(1)} ms, ` +
    `WAL ${Math.round(median(figures.moveWal) / 1024)} KB; insert into a vector table p50 ` +
    `${median(figures.insert).toFixed(1)} ms, WAL ${Math.round(median(figures.insertWal) / 1024)} KB`,
);
