import { sql } from 'kysely';
import type { TestDb } from './pglite.js';

/**
 * The number of rows in each of `tables`, in one statement (one snapshot), e.g. to assert that a
 * refused request wrote nothing: compare the counts before and after.
 */
export async function rowCounts<T extends string>(database: TestDb, tables: readonly T[]): Promise<Record<T, number>> {
  const columns = tables.map((t) => sql`(select count(*) from ${sql.table(t)})::int as ${sql.ref(t)}`);
  const { rows } = await sql<Record<T, number>>`select ${sql.join(columns)}`.execute(database.db.kysely);
  return rows[0]!;
}
