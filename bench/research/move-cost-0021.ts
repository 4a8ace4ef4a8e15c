// The embedding worker's move as the service runs it since migration 0021 (indexStagedVectors: staged
// vectors inserted into memory_vectors), timed with its WAL, on a store migrated to 0021 with vectors.
// Each batch: `batch` new text-only memories (copies of random ones, as a store leaves them) with their
// vectors staged, then the move, in a transaction rolled back after. Compare with move-cost.ts on a
// copy of the same store before 0021, alternating: `--before` runs the statement the worker ran then
// (an UPDATE of the memory rows, text as of dbda92d) on such a copy.
// Usage: DATABASE_URL=… tsx bench/research/move-cost-0021.ts [batch] [batches] [--before]
import { sql, type Transaction } from 'kysely';
import { openDb } from '../../src/db/client.js';
import { indexStagedVectors } from '../../src/db/queries/embedding-jobs.js';
import type { Database } from '../../src/db/schema.js';

const args = process.argv.slice(2).filter((a) => a !== '--before');
const before = process.argv.includes('--before');
const batch = Number(args[0] ?? 32);
const batches = Number(args[1] ?? 12);
/** indexStagedVectors before migration 0021 (src/db/queries/embedding-jobs.ts at dbda92d). */
const moveBefore = (tx: Transaction<Database>) =>
  sql<{ taken: number }>`
    with staged as (
      select j.memory_id, j.embedding from embedding_jobs j join semantic_memory m on m.id = j.memory_id
       where j.embedding is not null
       limit ${batch}
       for update of m skip locked
    ), moved as (
      update semantic_memory m set embedding = s.embedding
        from staged s
       where m.id = s.memory_id and m.embedding is null and m.archived_at is null
    ), done as (
      delete from embedding_jobs j using staged s where j.memory_id = s.memory_id
    )
    select count(*)::int as taken from staged`
    .execute(tx)
    .then((r) => r.rows[0]!.taken);
/** Where the store's vectors are: a table of their own since 0021, the memory rows before. */
const vectors = before
  ? sql`(select id as memory_id, embedding from semantic_memory where embedding_dims = 768 and embedding is not null)`
  : sql`(select memory_id, embedding from memory_vectors where embedding_dims = 768)`;
const db = await openDb({ databaseUrl: process.env.DATABASE_URL! });
const walNow = async () =>
  (await sql<{ l: string }>`select pg_current_wal_insert_lsn()::text as l`.execute(db.kysely)).rows[0]!.l;
const figures = { move: [] as number[], wal: [] as number[] };
class Rollback extends Error {}
try {
  for (let i = 0; i < batches; i++) {
    await db.kysely
      .transaction()
      .execute(async (tx) => {
        await sql`create temp table src on commit drop as
          select substr(md5(random()::text), 1, 12) as nid, m.project_id, m.content, m.content_type, m.content_format, m.keywords,
                 m.importance_score, m.source, m.embedding_model, m.embedding_dims, m.created_by, m.project_seq, v.embedding
            from (select * from ${vectors} a order by random() limit ${batch}) v
            join semantic_memory m on m.id = v.memory_id`.execute(tx);
        await sql`insert into semantic_memory (id, project_id, content, content_type, content_format, keywords,
                    importance_score, content_hash, source, embedding_model, embedding_dims, created_by, project_seq)
          select nid, project_id, content || ' (copy ' || nid || ')', content_type, content_format, keywords,
                 importance_score, md5(nid), source, embedding_model, embedding_dims, created_by, project_seq from src`.execute(
          tx,
        );
        await sql`insert into embedding_jobs (memory_id, embedding) select nid, embedding from src`.execute(tx);
        const w0 = await walNow();
        const t = performance.now();
        const taken = before ? await moveBefore(tx) : await indexStagedVectors(tx, batch);
        figures.move.push(performance.now() - t);
        const w1 = await walNow();
        if (taken !== batch) throw new Error(`moved ${taken} of ${batch} (other staged vectors waiting?)`);
        figures.wal.push(
          Number((await sql<{ b: string }>`select pg_wal_lsn_diff(${w1}, ${w0})::bigint as b`.execute(tx)).rows[0]!.b),
        );
        throw new Rollback();
      })
      .catch((error: unknown) => {
        if (!(error instanceof Rollback)) throw error;
      });
  }
} finally {
  await db.close();
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
console.log(
  `${batches} batches of ${batch}: ${before ? 'move into the memory rows (before 0021)' : 'insert into memory_vectors'} p50 ${median(figures.move).toFixed(1)} ms, ` +
    `WAL ${Math.round(median(figures.wal) / 1024)} KB`,
);
