import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../schema.js';
import { accessJoin, memoryColumns, type MemoryRow } from './memory-row.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A live (not deleted) memory. */
export async function getMemory(db: Db, id: string): Promise<MemoryRow | undefined> {
  const result = await sql<MemoryRow>`
    select ${memoryColumns}
      from semantic_memory m left join intervention_plans p on p.id = m.project_id ${accessJoin}
     where m.id = ${id} and m.archived_at is null`.execute(db);
  return result.rows[0];
}
