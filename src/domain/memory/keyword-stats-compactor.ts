import type { Kysely } from 'kysely';
import { compactKeywordStats } from '../../db/queries/keyword-stats.js';
import type { Database } from '../../db/schema.js';
import type { Logger } from '../../logger.js';

/**
 * Folds the keyword statistics' deltas every few seconds, so that searches sum few of them.
 * Searches are exact whether or not it has run (they add the pending deltas).
 */
export class KeywordStatsCompactor {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: Pick<Logger, 'warn' | 'debug'>,
    private readonly intervalMs = 2_000,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.running = this.running.then(() => this.compact());
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass now; never throws (a failed pass leaves the deltas for the next). */
  async compact(): Promise<number> {
    try {
      const folded = await compactKeywordStats(this.db);
      if (folded > 0) this.log.debug({ folded }, 'keyword statistics compacted');
      return folded;
    } catch (error) {
      this.log.warn({ err: error }, 'could not compact keyword statistics; will retry');
      return 0;
    }
  }
}
