import type { Kysely } from 'kysely';
import { addMemoryAccesses } from '../../db/queries/memory-access.js';
import type { Database } from '../../db/schema.js';
import type { Logger } from '../../logger.js';

/**
 * Counts search hits per memory and writes them in one batch per interval, so a search stays a
 * read: no row locks held across concurrent searches (they deadlocked), no commit to wait for.
 * Counts still pending when the process dies are lost — they are statistics, not writes anyone
 * was told were durable. Ids are written in sorted order, so instances never deadlock each other.
 */
export class AccessTracker {
  private pending = new Map<string, { count: number; at: Date }>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: Pick<Logger, 'warn'>,
    private readonly intervalMs = 1_000,
  ) {}

  record(ids: readonly string[]): void {
    const at = new Date();
    for (const id of ids) {
      const entry = this.pending.get(id);
      if (entry) {
        entry.count += 1;
        entry.at = at;
      } else this.pending.set(id, { count: 1, at });
    }
    if (ids.length > 0 && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flush();
      }, this.intervalMs);
      this.timer.unref();
    }
  }

  /** Writes what is pending now (also on shutdown). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.pending = new Map();
    try {
      await addMemoryAccesses(this.db, batch);
    } catch (error) {
      this.log.warn({ err: error, memories: batch.length }, 'could not record memory accesses; they are dropped');
    }
  }
}
