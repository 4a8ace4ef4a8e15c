// The embedding worker's move as the service runs it since migration 0021 (indexStagedVectors: staged
// vectors inserted into memory_vectors), timed with its WAL, on a store migrated to 0021 with vectors.
// Each batch: `batch` new text-only memories (copies of random ones, as a store leaves them) with their
// vectors staged, then the move, in a transaction rolled back after. Compare with move-cost.ts on a
// copy of the same store before 0021 (check out dbda92d), alternating.
// Usage: DATABASE_URL=… tsx bench/research/move-cost-0021.ts [batch] [batches]
import { sql } from 'kysely';
import { openDb } from '../../src/db/client.js';
import { indexStagedVectors } from '../../src/db/queries/embedding-jobs.js';

const batch = Number(process.argv[2] ?? 32);
const batches = Number(process.argv[3] ?? 12);
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
          select substr(md5(random()::text), 1, 12) as nid, m.*, v.embedding
            from (select * from memory_vectors where embedding_dims = 768 order by random() limit ${batch}) v
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
        const taken = await indexStagedVectors(tx, batch);
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
  `${batches} batches of ${batch}: insert into memory_vectors (indexStagedVectors) p50 ${median(figures.move).toFixed(1)} ms, ` +
    `WAL ${Math.round(median(figures.wal) / 1024)} KB`,
);
