import { setTimeout as sleep } from 'node:timers/promises';

/** How long the service has had no request in flight (0 while one is), in ms: see Drain.quietFor. */
export type QuietFor = () => number;

/** Waits for a lull in the requests: resolves once none has been in flight for a while, or at a deadline. */
export type Lull = (signal?: AbortSignal) => Promise<void>;

/**
 * A pause in the requests before background work starts, so that a burst of calls is not slowed by
 * it. No request for `quietMs` is a lull (the gaps between one client's calls in a row are a
 * millisecond or less); once `maxWaitMs` has passed the work starts anyway, so steady traffic
 * delays it by that much at most. Resolves early (without a lull) when `signal` aborts.
 *
 * Why: on Postgres the embedding worker's writes (a vector's HNSW insert costs its backend ~0.7 ms
 * of CPU, a batch of 32 ~25 ms) took CPU from the requests beside them. update_task with notes, 200
 * calls in a row on a 10k store, old and new alternating (4 rounds, a slow hour): p95 8.2–9.6 ms
 * with the worker beside the calls, 5.9–8.1 after. Only the worker waits: with the keyword
 * statistics' folds and the access counts' writes waiting too, the harness's searches right after
 * seeding 10,000 memories ran at 16.5–18.3 ms p50 in 4 of 9 runs (5.7–8.7 in the others); with the
 * worker alone waiting, 6.3 and 6.8 (2 runs), the code before 6.3–9.2 (3 runs). Searches add up the
 * deltas not folded yet, so the folds are what keeps them cheap (keyword-stats-compactor.ts).
 */
export function requestLull(quietFor: QuietFor, options: { quietMs: number; maxWaitMs: number }): Lull {
  return async (signal) => {
    const deadline = performance.now() + options.maxWaitMs;
    for (;;) {
      const quiet = quietFor();
      const left = deadline - performance.now();
      if (quiet >= options.quietMs || left <= 0 || signal?.aborted) return;
      try {
        await sleep(Math.max(1, Math.min(options.quietMs - quiet, left)), undefined, { signal, ref: false });
      } catch {
        return; // aborted
      }
    }
  };
}

/**
 * The service's lull: 20 ms without a request (one client's calls in a row leave gaps of a
 * millisecond or less between them), and a second at most.
 */
export const REQUEST_LULL = { quietMs: 20, maxWaitMs: 1_000 } as const;
