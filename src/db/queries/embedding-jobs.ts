import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../schema.js';
import { vectorLiteral } from '../vector-literal.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface ClaimedJob {
  memory_id: string;
  content: string;
  content_hash: string;
  attempts: number;
}

/**
 * Claims up to `batch` due jobs for `leaseMs`: a short statement (FOR UPDATE SKIP LOCKED, so
 * several service instances never take the same row) that leaves a lease behind instead of a lock,
 * so nothing waits on a row while the embedder works. A worker that dies mid-batch loses its lease
 * and the jobs become due again. Jobs of deleted memories are dropped on the way.
 */
export async function claimJobs(db: Db, batch: number, leaseMs: number): Promise<ClaimedJob[]> {
  const result = await sql<ClaimedJob & { archived: boolean }>`
    with due as (
      select memory_id from embedding_jobs
       where embedding is null and run_after <= now() and (leased_until is null or leased_until < now())
       order by run_after
       limit ${batch}
       for update skip locked
    ), leased as (
      update embedding_jobs j
         set leased_until = now() + ${leaseMs} * interval '1 millisecond', attempts = j.attempts + 1
        from due
       where j.memory_id = due.memory_id
      returning j.memory_id, j.attempts
    )
    select l.memory_id, m.content, m.content_hash, l.attempts, m.archived_at is not null as archived
      from leased l join semantic_memory m on m.id = l.memory_id`.execute(db);
  const dead = result.rows.filter((r) => r.archived).map((r) => r.memory_id);
  if (dead.length > 0) await db.deleteFrom('embedding_jobs').where('memory_id', 'in', dead).execute();
  return result.rows.filter((r) => !r.archived).map(({ archived: _, ...job }) => job);
}

/** memory_vectors and its columns, in the order the worker's inserts select them. */
const VECTOR_COLUMNS = sql`memory_vectors (memory_id, project_id, content_type, created_at, embedding_model, embedding_dims, embedding)`;

/**
 * Stores the vectors of finished jobs (into memory_vectors, the memory's row taking their model and
 * dimensions) and removes the jobs, in one statement. A memory whose content changed or that was
 * deleted since the claim keeps no stale vector: the memories are locked first, as deleteMemory
 * locks one (see indexStagedVectors).
 */
export async function completeJobs(
  db: Db,
  done: Array<{ memory_id: string; content_hash: string; vector: number[] }>,
  model: string,
): Promise<number> {
  if (done.length === 0) return 0;
  const dims = done[0]!.vector.length;
  const result = await sql<{ id: string }>`
    with input as (
      select * from unnest(${done.map((d) => d.memory_id)}::text[], ${done.map((d) => d.content_hash)}::text[],
                           ${done.map((d) => vectorLiteral(d.vector))}::text[]) as i(memory_id, content_hash, vec)
    ), live as (
      select m.id, m.project_id, m.content_type, m.created_at, i.vec
        from input i join semantic_memory m on m.id = i.memory_id
       where m.content_hash = i.content_hash and m.archived_at is null
         for no key update of m
    ), model as (
      update semantic_memory m set embedding_model = ${model}, embedding_dims = ${dims}
        from live l
       where m.id = l.id and (m.embedding_model is distinct from ${model} or m.embedding_dims is distinct from ${dims})
    ), vec as (
      insert into ${VECTOR_COLUMNS}
      select id, project_id, content_type, created_at, ${model}, ${dims}, vec::halfvec from live
      -- A re-embedding (another model) replaces the memory's vector.
      on conflict (memory_id) do update
        set embedding_model = excluded.embedding_model, embedding_dims = excluded.embedding_dims, embedding = excluded.embedding
      returning memory_id
    ), del as (
      delete from embedding_jobs j using input i where j.memory_id = i.memory_id
    )
    select memory_id as id from vec`.execute(db);
  return result.rows.length;
}

/**
 * Moves up to `batch` staged vectors (stored with their memory, see insertMemory) into
 * memory_vectors, and so into the HNSW index, and removes their jobs, in one statement. Locks the
 * memories first (SKIP LOCKED: several instances share the work), as deleteMemory's update does: a
 * memory deleted meanwhile gets no vector, and a delete that waited for this move removes the vector
 * it wrote (deleteMemory's second statement). The jobs are locked too: a job queued again meanwhile
 * (a model change: enqueueStale) waits, then stays queued. Only new memories have staged vectors, so
 * one never replaces a stored vector (another instance may have moved it since this one's snapshot).
 * An insert, not an update of the memory's row: a new row version of a memory writes an entry in
 * every index of semantic_memory (decision 0006). Returns how many jobs it took (0: none left).
 */
export async function indexStagedVectors(db: Db, batch: number): Promise<number> {
  const result = await sql<{ taken: number }>`
    with staged as (
      select j.memory_id, j.embedding, m.project_id, m.content_type, m.created_at, m.embedding_model,
             m.embedding_dims, m.archived_at
        from embedding_jobs j join semantic_memory m on m.id = j.memory_id
       where j.embedding is not null
       limit ${batch}
         for no key update of m, j skip locked
    ), moved as (
      insert into ${VECTOR_COLUMNS}
      select memory_id, project_id, content_type, created_at, embedding_model, embedding_dims, embedding from staged
       where archived_at is null and embedding_model is not null
      on conflict (memory_id) do nothing
    ), done as (
      delete from embedding_jobs j using staged s where j.memory_id = s.memory_id
    )
    select count(*)::int as taken from staged`.execute(db);
  return result.rows[0]?.taken ?? 0;
}

/** Puts claimed jobs back, due again after `delayMs`, with the reason they failed. */
export async function retryJobs(db: Db, memoryIds: string[], delayMs: number, error: string): Promise<void> {
  if (memoryIds.length === 0) return;
  await db
    .updateTable('embedding_jobs')
    .set({
      leased_until: null,
      run_after: sql`now() + ${delayMs} * interval '1 millisecond'`,
      last_error: error.slice(0, 1000),
    })
    .where('memory_id', 'in', memoryIds)
    .execute();
}

/** Makes every waiting job due now (the embedder answers again: no reason to wait out backoffs). */
export async function makeJobsDue(db: Db): Promise<void> {
  await sql`update embedding_jobs set run_after = now() where run_after > now() and leased_until is null`.execute(db);
}

/**
 * Queues every live memory that has no vector of `model` (new memories stored while the embedder
 * was down are queued already; this catches a model change), or with `all`, every live memory.
 * A vector staged for a queued memory is dropped: the embedder makes a new one. Returns how many
 * were queued.
 */
export async function enqueueStale(db: Db, model: string, options: { all?: boolean } = {}): Promise<number> {
  const result = await sql`
    insert into embedding_jobs (memory_id)
    select id from semantic_memory
     where archived_at is null and (${options.all === true} or embedding_model is distinct from ${model})
    on conflict (memory_id) do update set run_after = now(), leased_until = null, embedding = null`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Jobs waiting (due or not) and the oldest one's age in seconds. */
export async function queueDepth(db: Db): Promise<{ pending: number; oldest_age_s: number | null }> {
  const result = await sql<{ pending: number; oldest_age_s: number | null }>`
    select count(*)::int as pending, extract(epoch from now() - min(created_at))::float8 as oldest_age_s
      from embedding_jobs`.execute(db);
  return result.rows[0] ?? { pending: 0, oldest_age_s: null };
}
