/** What a round of background work asks for next. */
export interface RoundResult {
  /** Run again after this long, or sooner when kicked. */
  nextMs: number;
  /** Backing off: kicks are ignored until this wait is over (or `resume()`). */
  hold?: boolean;
}

/**
 * Background work on a timer, one round at a time: after each round it waits what the round asks,
 * or less when kicked (a kick during a round runs the next one that soon after it). A round due
 * starts in a lull of the requests (`lull`, see lull.ts); kicks meanwhile are served by it. The
 * embedding worker and the job runner are built on it. A round handles its own errors.
 */
export class BackgroundLoop {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  private held = false;
  /** Kicks during a round: run again this long after it (Infinity: none). */
  private again = Infinity;
  /** When the scheduled round starts (performance.now(); Infinity: none scheduled). */
  private dueAt = Infinity;

  /** Aborted by stop(): a round waiting for a lull gives up. */
  private stopSignal = new AbortController();

  constructor(
    private readonly round: () => Promise<RoundResult>,
    /** Waits for a lull in the requests (lull.ts), or until the signal aborts. */
    private readonly lull?: (signal: AbortSignal) => Promise<void>,
  ) {}

  get active(): boolean {
    return !this.stopped;
  }

  /** Accepts kicks from now on; the first round runs at the first kick. */
  start(): void {
    this.stopped = false;
    this.held = false;
    if (this.stopSignal.signal.aborted) this.stopSignal = new AbortController();
  }

  /** Run a round within `delayMs`. Ignored when stopped or holding. */
  kick(delayMs = 0): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = Math.min(this.again, delayMs);
      return;
    }
    if (!this.held && this.dueAt > performance.now() + delayMs) this.schedule(delayMs);
  }

  /** Ends a hold (the reason to back off is gone) and runs a round now. */
  resume(): void {
    this.held = false;
    this.kick();
  }

  /** No more rounds; resolves when the one in flight is over. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopSignal.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.dueAt = Infinity;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.dueAt = performance.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.dueAt = Infinity;
      this.running = this.run().finally(() => {
        this.running = null;
      });
    }, delayMs);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    if (this.lull) await this.lull(this.stopSignal.signal);
    if (this.stopped) return;
    // Kicks until now are served by this round.
    this.again = Infinity;
    const next = await this.round();
    this.held = next.hold === true;
    this.schedule(this.held ? next.nextMs : Math.min(this.again, next.nextMs));
  }
}
