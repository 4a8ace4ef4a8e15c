import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Adds search hits to memory_access: per memory id, `count` more accesses, the last at `at` (the
 * later of it and the stored one). Ids of memories gone or archived are skipped. Rows are written
 * in id order, so instances never deadlock each other.
 */
export async function addMemoryAccesses(
  db: Kysely<Database>,
  batch: ReadonlyArray<readonly [id: string, entry: { count: number; at: Date }]>,
): Promise<void> {
  await sql`
        insert into memory_access as t (memory_id, access_count, last_accessed_at)
        select a.id, a.n, a.at
          from unnest(${batch.map(([id]) => id)}::text[], ${batch.map(([, e]) => e.count)}::int[],
                      ${batch.map(([, e]) => e.at.toISOString())}::timestamptz[]) as a(id, n, at)
          join semantic_memory m on m.id = a.id and m.archived_at is null
         order by a.id
        on conflict (memory_id) do update
           set access_count = t.access_count + excluded.access_count,
               last_accessed_at = greatest(t.last_accessed_at, excluded.last_accessed_at)`.execute(db);
}
