import { setImmediate as nextTurn } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';

/** How long a stretch of work may hold the event loop before the next item waits a turn. */
export const SLICE_MS = 20;

/**
 * `values.map(f)`, letting the event loop turn (other requests, `/healthz`) whenever the items done
 * since the last turn took SLICE_MS or more: CPU work over a batch (building 500 nodes' search
 * documents) then holds the loop for about SLICE_MS plus one item, not for the whole batch.
 * An item that throws stops the map with its error, as `map` does.
 */
export async function mapYielding<T, R>(
  values: readonly T[],
  f: (value: T, index: number) => R,
  sliceMs = SLICE_MS,
): Promise<R[]> {
  const out: R[] = [];
  let since = performance.now();
  for (let i = 0; i < values.length; i++) {
    out.push(f(values[i]!, i));
    if (i + 1 < values.length && performance.now() - since >= sliceMs) {
      await nextTurn();
      since = performance.now();
    }
  }
  return out;
}
