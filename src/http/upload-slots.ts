import { AppError } from '../errors.js';

/** Seconds a refused upload is told to wait: an upload takes seconds (theia's 131 MB: ~7–10 s). */
export const UPLOAD_RETRY_AFTER_S = 5;

/** One upload's place among those in flight; `release()` (idempotent) gives it back. */
export interface UploadSlot {
  /** The body is staged: from now on the upload is being stored (for the metrics). */
  storing(): void;
  release(): void;
}

/**
 * Graph uploads in flight on this instance (receiving their body or storing it): at most `max` in
 * all and at most `perKey` for one key (one client address when AUTH=off), so that a key cannot take
 * every upload place, nor the disk that staged bodies use, nor the database connections of the
 * uploads being stored. Counted in memory, per instance.
 */
export class UploadSlots {
  private readonly byOwner = new Map<string, number>();
  private receiving = 0;
  private storingNow = 0;

  constructor(
    private readonly max: number,
    private readonly perKey: number,
  ) {}

  /**
   * A slot for `owner` (`key:<name>` or `ip:<address>`), or the RATE_LIMITED error to answer (its
   * details carry `retry_after_s`). `who` names the owner in that message.
   */
  take(owner: string, who: string): UploadSlot | AppError {
    const mine = this.byOwner.get(owner) ?? 0;
    const details = (limit: number) => ({ limit, retry_after_s: UPLOAD_RETRY_AFTER_S });
    if (mine >= this.perKey) {
      return new AppError(
        'RATE_LIMITED',
        `${who} already has ${mine} graph upload${mine === 1 ? '' : 's'} in flight, the most one key may have (GRAPH_UPLOADS_PER_KEY): retry when one has finished`,
        { details: details(this.perKey) },
      );
    }
    if (this.receiving + this.storingNow >= this.max) {
      return new AppError(
        'RATE_LIMITED',
        `${this.max} graph uploads are in flight, the most this service takes at once (GRAPH_UPLOADS_MAX): retry in ${UPLOAD_RETRY_AFTER_S} s`,
        { details: details(this.max) },
      );
    }
    this.byOwner.set(owner, mine + 1);
    this.receiving++;
    let state: 'receiving' | 'storing' | 'done' = 'receiving';
    return {
      storing: () => {
        if (state !== 'receiving') return;
        state = 'storing';
        this.receiving--;
        this.storingNow++;
      },
      release: () => {
        if (state === 'done') return;
        if (state === 'receiving') this.receiving--;
        else this.storingNow--;
        state = 'done';
        const left = (this.byOwner.get(owner) ?? 1) - 1;
        if (left > 0) this.byOwner.set(owner, left);
        else this.byOwner.delete(owner);
      },
    };
  }

  /** Uploads in flight by phase. */
  stats(): { receiving: number; storing: number } {
    return { receiving: this.receiving, storing: this.storingNow };
  }
}
