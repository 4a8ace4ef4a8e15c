/**
 * Runs `task` every `intervalMs`, one run at a time (a slow run delays the next, never overlaps it),
 * each in a lull of the requests (`lull`, see lull.ts), from start() until stop(), which waits for
 * the run under way (not for a lull). The timer does not keep the process alive. For background
 * passes that must never throw (the task catches and logs its own failures).
 */
export class Periodic {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();
  private stopSignal = new AbortController();

  constructor(
    private readonly task: () => Promise<unknown>,
    private readonly intervalMs: number,
    /** Waits for a lull in the requests (lull.ts), or until the signal aborts. */
    private readonly lull?: (signal: AbortSignal) => Promise<void>,
  ) {}

  start(): void {
    if (this.timer) return;
    if (this.stopSignal.signal.aborted) this.stopSignal = new AbortController();
    const signal = this.stopSignal.signal;
    this.timer = setInterval(() => {
      this.running = this.running.then(async () => {
        if (this.lull) await this.lull(signal);
        if (!signal.aborted) await this.task();
      });
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopSignal.abort();
    await this.running;
  }
}
