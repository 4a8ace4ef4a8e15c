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
    // One row back, not one per folded word: the service read and parsed ~2,000 rows a fold (a
    // 2,000-delta fold 24.3 → 15.7 ms at p50, client-observed, on the 10k store).
    const [folded] = (
      await sql<{ moved: number; zero_keys: string[]; zero_lexemes: string[] }>`
      with moved as (
        delete from memory_lexeme_delta
         ${max === undefined ? sql`` : sql`where ctid = any (array(select ctid from memory_lexeme_delta limit ${max}))`}
        returning project_key, lexeme, delta
      ), summed as (
        select project_key, lexeme, sum(delta) as delta from moved group by project_key, lexeme
      ), upserted as (
        insert into memory_lexeme_df as t (project_key, lexeme, df)
        select project_key, lexeme, delta from summed order by project_key, lexeme
        on conflict (project_key, lexeme) do update set df = t.df + excluded.df
        returning t.project_key, t.lexeme, t.df
      )
      select (select count(*) from moved)::int as moved,
             coalesce((select array_agg(project_key::text order by project_key, lexeme) from upserted where df <= 0), '{}') as zero_keys,
             coalesce((select array_agg(lexeme order by project_key, lexeme) from upserted where df <= 0), '{}') as zero_lexemes`.execute(
        trx,
      )
    ).rows;
    if (folded && folded.zero_keys.length > 0) {
      // Words no memory of the project holds any more (after deletes): their rows go.
      await sql`delete from memory_lexeme_df d
                 using unnest(${folded.zero_keys}::text[], ${folded.zero_lexemes}::text[]) as z(project_key, lexeme)
                 where d.project_key = z.project_key and d.lexeme = z.lexeme and d.df <= 0`.execute(trx);
    }
    return Number(folded?.moved ?? 0);
  });
}

/** Vacuums the keyword statistics' deltas (not in a transaction: VACUUM cannot run in one). */
export async function vacuumKeywordDeltas(db: Kysely<Database>): Promise<void> {
  await sql`vacuum memory_lexeme_delta`.execute(db);
}
