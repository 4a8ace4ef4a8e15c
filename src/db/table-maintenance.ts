import { sql, type Kysely } from 'kysely';
import { Periodic } from '../periodic.js';
import type { Logger } from '../logger.js';
import type { Database } from './schema.js';

/** A table is vacuumed once this many rows plus this share of its live rows are dead (autovacuum's defaults). */
const VACUUM_BASE = 50;
const VACUUM_SHARE = 0.2;
/** A table is analyzed once this many rows plus this share of its live rows changed since the last analyze. */
const ANALYZE_BASE = 50;
const ANALYZE_SHARE = 0.1;
/** A CHECKPOINT once this much WAL was written since the last one (see checkpointIfDue). */
const CHECKPOINT_WAL_BYTES = 64 * 1024 * 1024;
/** How often the WAL written since the last checkpoint is looked at (one cheap query). */
const CHECKPOINT_CHECK_MS = 5_000;

/**
 * Autovacuum for embedded PGlite, which has none (one backend in single-user mode): every
 * `intervalMs` it reads the service's tables' row statistics and runs VACUUM (ANALYZE) on a table
 * with enough dead rows, or ANALYZE on one that changed enough, with autovacuum's thresholds. Without
 * it, the keyword statistics' deltas (written and deleted all the time), the embedding jobs and the
 * memories the worker updates fill the folder with dead rows that every search reads past, GIN's
 * pending list is never merged, and the planner keeps the estimates of an empty database (measured:
 * a search at 10,000 memories 110 ms before VACUUM ANALYZE, 31–40 ms after; the folder 466 MB).
 * One table per statement, through the background connection (see ConnectionTurns): requests go first.
 *
 * And checkpoints: a standalone backend never starts one on its own (Postgres asks its checkpointer
 * process for one every max_wal_size of WAL, and PGlite has none), so the WAL grew until the next
 * restart: 1 GB after 10,000 stores, beside 110 MB of data, whatever max_wal_size said. A CHECKPOINT
 * every CHECKPOINT_WAL_BYTES of WAL lets Postgres remove the segments past max_wal_size (client.ts).
 */
export class TableMaintenance {
  private readonly periodic: Periodic;
  private readonly checkpoints: Periodic;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: Pick<Logger, 'warn' | 'debug'>,
    intervalMs = 30_000,
    private readonly checkpointWalBytes = CHECKPOINT_WAL_BYTES,
  ) {
    this.periodic = new Periodic(() => this.pass(), intervalMs);
    this.checkpoints = new Periodic(() => this.checkpointIfDue(), Math.min(intervalMs, CHECKPOINT_CHECK_MS));
  }

  start(): void {
    this.periodic.start();
    this.checkpoints.start();
  }

  /** Stops the passes; waits for the ones under way. */
  async stop(): Promise<void> {
    await Promise.all([this.periodic.stop(), this.checkpoints.stop()]);
  }

  /**
   * A CHECKPOINT when more than `checkpointWalBytes` of WAL were written since the last one; never
   * throws. Returns whether it ran one.
   */
  async checkpointIfDue(): Promise<boolean> {
    try {
      const { rows } = await sql<{ bytes: number }>`
        select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::float8 as bytes
          from pg_control_checkpoint()`.execute(this.db);
      const bytes = rows[0]?.bytes ?? 0;
      if (bytes <= this.checkpointWalBytes) return false;
      await sql`checkpoint`.execute(this.db);
      this.log.debug({ wal_bytes: bytes }, 'checkpoint');
      return true;
    } catch (error) {
      this.log.warn({ err: error }, 'could not checkpoint; will retry');
      return false;
    }
  }

  /** One pass now: the tables that need it, vacuumed or analyzed; never throws. Returns what was done. */
  async pass(): Promise<Array<{ table: string; action: 'vacuum' | 'analyze' }>> {
    const done: Array<{ table: string; action: 'vacuum' | 'analyze' }> = [];
    try {
      // A table's size as autovacuum reckons it: its rows at the last vacuum or analyze (reltuples,
      // kept in the catalog), or the live rows counted since, if more. PGlite's counters start at
      // zero with each process: by them alone a table of 10,000 memories would count as the few
      // hundred stored since, and be vacuumed (every index read whole) every few hundred writes.
      const tables = await sql<{ relname: string; live: number; dead: number; changed: number }>`
        select s.relname, greatest(s.n_live_tup, c.reltuples, 0)::float8 as live, s.n_dead_tup::float8 as dead,
               s.n_mod_since_analyze::float8 as changed
          from pg_stat_user_tables s join pg_class c on c.oid = s.relid
         where s.schemaname = 'public'`.execute(this.db);
      for (const t of tables.rows) {
        const vacuum = t.dead > VACUUM_BASE + VACUUM_SHARE * t.live;
        const analyze = t.changed > ANALYZE_BASE + ANALYZE_SHARE * t.live;
        if (!vacuum && !analyze) continue;
        const table = sql.id(t.relname);
        await (vacuum ? sql`vacuum (analyze) ${table}` : sql`analyze ${table}`).execute(this.db);
        done.push({ table: t.relname, action: vacuum ? 'vacuum' : 'analyze' });
      }
      if (done.length > 0) this.log.debug({ done }, 'tables vacuumed or analyzed');
    } catch (error) {
      this.log.warn({ err: error }, 'could not vacuum or analyze; will retry');
    }
    return done;
  }
}
