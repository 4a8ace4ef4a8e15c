/**
 * A benchmark's undo list: everything it starts (a scratch database, a service, a harness) registers
 * how to undo it; each undo runs once, early when released, else at the end (latest first), on
 * success, failure or SIGINT / SIGTERM (then the process exits 130 once they ran).
 */
export class Cleanups {
  private readonly undos: Array<{ what: string; fn: () => Promise<void> }> = [];
  private cleaning: Promise<void> | undefined;
  /** A signal came: the benchmark stops where it is and writes no partial results. */
  interrupted = false;

  /** `bench: <signal>: <message>` is printed when a signal comes. */
  constructor(message: string) {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        this.interrupted = true;
        console.error(`\nbench: ${signal}: ${message}`);
        void this.run().finally(() => process.exit(130));
      });
    }
  }

  /** Registers an undo; the function returned runs it now (once) and takes it off the list. */
  add(what: string, fn: () => Promise<void>): () => Promise<void> {
    let done: Promise<void> | undefined;
    const once = () => (done ??= fn());
    const entry = { what, fn: once };
    this.undos.push(entry);
    return async () => {
      const i = this.undos.indexOf(entry);
      if (i >= 0) this.undos.splice(i, 1);
      await once();
    };
  }

  /** Runs every undo left, latest first; one that fails is reported and the rest still run. */
  run(): Promise<void> {
    return (this.cleaning ??= (async () => {
      // A snapshot: an undo released early takes itself off the list meanwhile.
      for (const { what, fn } of this.undos.splice(0).reverse()) {
        const started = performance.now();
        try {
          await fn();
        } catch (error) {
          console.error(`bench: cleanup (${what}) failed: ${(error as Error).message}`);
        }
        const ms = performance.now() - started;
        if (ms > 1_000) console.error(`bench: cleanup (${what}) took ${(ms / 1000).toFixed(1)} s`);
      }
    })());
  }
}
