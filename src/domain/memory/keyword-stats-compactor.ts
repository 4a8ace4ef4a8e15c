import type { Kysely } from 'kysely';
import { compactKeywordStats, vacuumKeywordDeltas } from '../../db/queries/keyword-stats.js';
import type { Database } from '../../db/schema.js';
import { Periodic } from '../../periodic.js';
import type { Logger } from '../../logger.js';

/** Deltas folded per transaction (a stored memory leaves ~55: one per distinct word, and two totals). */
const FOLD_CHUNK = 2_000;

/**
 * Folds the keyword statistics' deltas every few seconds, so that searches sum few of them.
 * Searches are exact whether or not it has run (they add the pending deltas).
 */
export class KeywordStatsCompactor {
  private readonly periodic: Periodic;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: Pick<Logger, 'warn' | 'debug'>,
    intervalMs = 2_000,
  ) {
    this.periodic = new Periodic(() => this.compact(), intervalMs);
  }

  start(): void {
    this.periodic.start();
  }

  /** Stops the passes; waits for the one under way. */
  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /**
   * One pass now, in transactions of at most FOLD_CHUNK deltas (a burst of stores leaves tens of
   * thousands: ~55 per memory); never throws (a failed pass leaves the deltas for the next).
   */
  async compact(): Promise<number> {
    try {
      let folded = 0;
      for (;;) {
        const chunk = await compactKeywordStats(this.db, FOLD_CHUNK);
        folded += chunk;
        if (chunk < FOLD_CHUNK) break;
      }
      // Every fold leaves its deltas dead, tens of thousands a minute while memories are stored, and
      // each search's lookup of its words' deltas read past them until autovacuum came by: 242,000
      // dead rows after 5,000 stores one at a time; with GIN's pending list (migrations/0015) search
      // p50 was 29 ms then, 10 ms once both were cleaned. Its live rows are few: vacuuming it is cheap.
      if (folded > 0) await vacuumKeywordDeltas(this.db);
      if (folded > 0) this.log.debug({ folded }, 'keyword statistics compacted');
      return folded;
    } catch (error) {
      this.log.warn({ err: error }, 'could not compact keyword statistics; will retry');
      return 0;
    }
  }
}
