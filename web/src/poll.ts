import { useCallback, useEffect, useRef, useState } from 'react';
import { errorOf, NETWORK_ERROR, type ApiError } from './api';
import type { Answer } from './load';

export interface Polled<T> {
  data: T | null;
  error: ApiError | null;
  /** When the data last came in. */
  at: Date | null;
  /** Seconds until the next try, when the service asked to wait (429 or 503 with Retry-After). */
  waiting: number | null;
  /** Load again now (after a change this page made). */
  reload(): void;
}

/**
 * Loads, then loads again every `everyMs` while the tab is visible: the live view of a board that
 * agents change under our feet. It keeps showing the last good data through a failed refresh, and
 * when the service answers 429 or 503 it waits as long as Retry-After says before asking again, so
 * a dashboard left open behind a rate limit does not spend the team's budget. `load` null: not yet.
 */
export function usePolling<T>(
  load: (() => Promise<Answer<T>>) | null,
  deps: readonly unknown[],
  everyMs: number,
): Polled<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [at, setAt] = useState<Date | null>(null);
  const [waiting, setWaiting] = useState<number | null>(null);
  const [nonce, setNonce] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    setData(null);
    setAt(null);
    setError(null);
    setWaiting(null);
  }, deps);

  const enabled = load !== null;
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      if (document.visibilityState === 'hidden') {
        timer = setTimeout(tick, everyMs);
        return;
      }
      let wait = everyMs;
      try {
        const { data: got, error: failed, response } = await loadRef.current!();
        if (!live) return;
        if (got !== undefined) {
          setData(got);
          setError(null);
          setAt(new Date());
          setWaiting(null);
        } else {
          setError(errorOf(failed, response.status));
          const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
          if ((response.status === 429 || response.status === 503) && retryAfter > 0) {
            wait = Math.max(everyMs, retryAfter * 1000);
            setWaiting(Math.ceil(wait / 1000));
          } else setWaiting(null);
        }
      } catch {
        if (!live) return;
        setError(NETWORK_ERROR);
      }
      timer = setTimeout(tick, wait);
    };
    void tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [...deps, nonce, everyMs, enabled]);

  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { data, error, at, waiting, reload };
}

/** Retry-After in seconds, given as seconds or as an HTTP date; 0 when absent or unreadable. */
function retryAfterSeconds(value: string | null): number {
  if (!value) return 0;
  const seconds = /^\d+$/.test(value.trim()) ? Number(value) : (Date.parse(value) - Date.now()) / 1000;
  return Number.isFinite(seconds) && seconds > 0 ? seconds : 0;
}
