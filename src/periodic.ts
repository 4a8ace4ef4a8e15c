/**
 * Runs `task` every `intervalMs`, one run at a time (a slow run delays the next, never overlaps it),
 * from start() until stop(), which waits for the run under way. The timer does not keep the process
 * alive. For background passes that must never throw (the task catches and logs its own failures).
 */
export class Periodic {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly task: () => Promise<unknown>,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.running = this.running.then(() => this.task());
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
