import { sql } from 'kysely';
import type { TestDb } from './pglite.js';

/** Every table a request can write rows to. */
export const WRITABLE_TABLES = [
  'intervention_plans',
  'phases',
  'micro_tasks',
  'task_status_history',
  'semantic_memory',
  'embedding_jobs',
  'memory_vectors',
  'code_graphs',
  'graph_commits',
  'graph_nodes',
  'graph_edges',
  'jobs',
  'api_keys',
] as const;

/**
 * The number of rows in each of `tables` (default: every writable table), in one statement (one
 * snapshot), e.g. to assert that a refused request wrote nothing: compare the counts before and after.
 */
export async function rowCounts(
  database: TestDb,
  tables: readonly string[] = WRITABLE_TABLES,
): Promise<Record<string, number>> {
  const columns = tables.map((t) => sql`(select count(*) from ${sql.table(t)})::int as ${sql.ref(t)}`);
  const { rows } = await sql<Record<string, number>>`select ${sql.join(columns)}`.execute(database.db.kysely);
  return rows[0]!;
}
