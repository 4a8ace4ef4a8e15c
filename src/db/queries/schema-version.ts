import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** The highest migration applied (schema_version), or null when none is recorded. Throws when the table is missing. */
export async function schemaVersion(db: Kysely<Database>): Promise<number | null> {
  const result = await sql<{ v: number | null }>`
        select (select max(version) from schema_version) as v`.execute(db);
  return result.rows[0]?.v ?? null;
}
