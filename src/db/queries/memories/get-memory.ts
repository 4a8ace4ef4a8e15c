import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../schema.js';
import { accessJoin, memoryColumns, type MemoryRow } from './memory-row.js';
import { inProjects, type ProjectScope } from '../project-scope.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A live (not deleted) memory (of `projects`). */
export async function getMemory(db: Db, id: string, projects?: ProjectScope): Promise<MemoryRow | undefined> {
  const result = await sql<MemoryRow>`
    select ${memoryColumns}
      from semantic_memory m left join intervention_plans p on p.id = m.project_id ${accessJoin}
     where m.id = ${id} and m.archived_at is null and ${inProjects(sql.ref('m.project_id'), projects)}`.execute(db);
  return result.rows[0];
}
