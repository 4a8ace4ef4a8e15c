import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** Held (per transaction) by whoever folds deltas, so two instances never fold at once. */
const COMPACT_LOCK = 727_274_002;

/**
 * Folds the keyword statistics' pending deltas (memory_lexeme_delta, appended by the trigger on
 * every write) into memory_lexeme_df, and drops counts that reached zero: at most `max` deltas per
 * call (all when not given) (one short transaction; PGlite serves nothing else meanwhile). One instance at a time;
 * returns how many deltas were folded (0 when another instance is at it).
 */
export async function compactKeywordStats(db: Kysely<Database>, max?: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const lock = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${COMPACT_LOCK}) as ok`.execute(trx);
    if (!lock.rows[0]?.ok) return 0;
    const folded = await sql<{ project_key: string; lexeme: string; df: number; moved: number }>`
      with moved as (
        delete from memory_lexeme_delta
         ${max === undefined ? sql`` : sql`where ctid = any (array(select ctid from memory_lexeme_delta limit ${max}))`}
        returning project_key, lexeme, delta
      ), summed as (
        select project_key, lexeme, sum(delta) as delta, count(*) as n from moved group by project_key, lexeme
      ), upserted as (
        insert into memory_lexeme_df as t (project_key, lexeme, df)
        select project_key, lexeme, delta from summed order by project_key, lexeme
        on conflict (project_key, lexeme) do update set df = t.df + excluded.df
        returning t.project_key, t.lexeme, t.df
      )
      select u.project_key, u.lexeme, u.df, s.n::int as moved
        from upserted u join summed s using (project_key, lexeme)`.execute(trx);
    const zero = folded.rows.filter((r) => Number(r.df) <= 0);
    if (zero.length > 0) {
      await sql`delete from memory_lexeme_df d
                 using unnest(${zero.map((r) => r.project_key)}::text[], ${zero.map((r) => r.lexeme)}::text[]) as z(project_key, lexeme)
                 where d.project_key = z.project_key and d.lexeme = z.lexeme and d.df <= 0`.execute(trx);
    }
    return folded.rows.reduce((sum, r) => sum + r.moved, 0);
  });
}

/** Vacuums the keyword statistics' deltas (not in a transaction: VACUUM cannot run in one). */
export async function vacuumKeywordDeltas(db: Kysely<Database>): Promise<void> {
  await sql`vacuum memory_lexeme_delta`.execute(db);
}
