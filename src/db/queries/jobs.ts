import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, JobKind, JobsTable } from '../schema.js';

export type JobRow = Selectable<JobsTable>;

/** Queues a job; returns it as stored. */
export async function insertJob(
  db: Kysely<Database>,
  job: { id: string; kind: JobKind; params: Record<string, unknown>; createdBy: string | null },
): Promise<JobRow> {
  return db
    .insertInto('jobs')
    .values({ id: job.id, kind: job.kind, params: JSON.stringify(job.params), created_by: job.createdBy })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function getJob(db: Kysely<Database>, id: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Claims the oldest queued job, or a running one whose lease ran out (its runner died), for
 * `leaseMs`: one statement, FOR UPDATE SKIP LOCKED, so instances never take the same job.
 */
export async function claimJob(db: Kysely<Database>, leaseMs: number): Promise<JobRow | undefined> {
  const result = await sql<JobRow>`
    with next as (
      select id from jobs
       where status = 'queued' or (status = 'running' and leased_until < now())
       order by created_at
       limit 1
       for update skip locked
    )
    update jobs j
       set status = 'running', attempts = j.attempts + 1, started_at = coalesce(j.started_at, now()),
           leased_until = now() + ${leaseMs} * interval '1 millisecond'
      from next
     where j.id = next.id
    returning j.*`.execute(db);
  return result.rows[0];
}

/** Records progress and renews the lease; false when the job is no longer this runner's (finished elsewhere). */
export async function reportProgress(
  db: Kysely<Database>,
  id: string,
  progress: Record<string, unknown>,
  leaseMs: number,
): Promise<boolean> {
  const result = await sql`
    update jobs set progress = ${JSON.stringify(progress)}::jsonb, leased_until = now() + ${leaseMs} * interval '1 millisecond'
     where id = ${id} and status = 'running'`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}

/** Finishes a running job with its result, or its error (and its last progress, when given). */
export async function finishJob(
  db: Kysely<Database>,
  id: string,
  outcome: { result: Record<string, unknown> } | { error: string },
  progress?: Record<string, unknown>,
): Promise<void> {
  await db
    .updateTable('jobs')
    .set({
      ...(progress ? { progress: JSON.stringify(progress) } : {}),
      status: 'result' in outcome ? 'succeeded' : 'failed',
      result: 'result' in outcome ? JSON.stringify(outcome.result) : null,
      error: 'error' in outcome ? outcome.error.slice(0, 4000) : null,
      finished_at: sql`now()`,
      leased_until: null,
    })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute();
}

/** Puts a running job back in the queue (its runner is shutting down); the attempt does not count. */
export async function requeueJob(db: Kysely<Database>, id: string): Promise<void> {
  await sql`
    update jobs set status = 'queued', leased_until = null, attempts = greatest(attempts - 1, 0)
     where id = ${id} and status = 'running'`.execute(db);
}

/** Jobs not yet finished, by status (`queued`, `running`; absent when none). */
export async function unfinishedJobs(db: Kysely<Database>): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('jobs')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('status', 'in', ['queued', 'running'])
    .groupBy('status')
    .execute();
  return { queued: 0, running: 0, ...Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])) };
}
