import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../schema.js';
import { accessJoin, memoryColumns, type MemoryRow } from './memory-row.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The live memory with this content in this project (by title, case-insensitive), if any. */
export async function findDuplicate(db: Db, project: string, contentHash: string): Promise<MemoryRow | undefined> {
  const query = sql<MemoryRow>`
    select ${memoryColumns}
      from intervention_plans p
      join semantic_memory m on coalesce(m.project_id, '') = p.id   -- the dedup key's expression: its index answers
      ${accessJoin}
     where lower(p.title) = lower(${project}) and m.content_hash = ${contentHash} and m.archived_at is null`;
  const [row] = (await query.execute(db)).rows;
  return row;
}
/** The live memory with this content in the project with this id (`''` for none): the duplicate insertMemory met. */
export async function findByHash(db: Db, projectId: string, contentHash: string): Promise<MemoryRow | undefined> {
  const result = await sql<MemoryRow>`
    select ${memoryColumns}
      from semantic_memory m left join intervention_plans p on p.id = m.project_id ${accessJoin}
     where coalesce(m.project_id, '') = ${projectId} and m.content_hash = ${contentHash} and m.archived_at is null`.execute(
    db,
  );
  return result.rows[0];
}
