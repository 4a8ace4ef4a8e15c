import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../schema.js';
import { inProjects, type ProjectScope } from '../project-scope.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Deletes a memory: the row stays as a tombstone (id, author, dates) but its content, keywords,
 * hash and vector are erased, so a secret stored by mistake is gone. Its project's title (null: none);
 * undefined, having written nothing, when no live memory (of `projects`) has this id.
 */
export async function deleteMemory(
  db: Db,
  id: string,
  projects?: ProjectScope,
): Promise<{ project: string | null } | undefined> {
  // Read committed (the default, pinned here): the second statement below needs a snapshot of its own.
  if (!db.isTransaction)
    return db
      .transaction()
      .setIsolationLevel('read committed')
      .execute((tx) => deleteMemory(tx, id, projects));
  const result = await sql<{ project: string | null }>`
    with del as (
      update semantic_memory
         set archived_at = now(), content = '', keywords = '{}', content_hash = '',
             embedding_model = null, embedding_dims = null
       where id = ${id} and archived_at is null and ${inProjects(sql.ref('project_id'), projects)}
      returning id, project_id
    ), job as (
      delete from embedding_jobs where memory_id in (select id from del)
    ), access as (
      delete from memory_access where memory_id in (select id from del)
    )
    select p.title as project from del left join intervention_plans p on p.id = del.project_id`.execute(db);
  const deleted = result.rows[0];
  // Its vector, in a statement of its own: the embedding worker may have held the memory
  // (indexStagedVectors, completeJobs) and inserted the vector after the snapshot of the statement
  // above was taken. Its update waited for the worker to commit, and a new statement sees the vector.
  if (deleted) await sql`delete from memory_vectors where memory_id = ${id}`.execute(db);
  return deleted;
}
