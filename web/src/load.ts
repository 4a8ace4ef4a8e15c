import { useCallback, useEffect, useRef, useState } from 'react';
import { errorOf, NETWORK_ERROR, type ApiError } from './api';

/** What an openapi-fetch call resolves to. */
export type Answer<T> = { data?: T; error?: unknown; response: Response };

/**
 * The result of a REST call that runs again whenever `deps` change (`call` returning null: nothing to
 * load yet). An answer that arrives after the deps changed (the user moved on) is dropped, so a slow
 * old answer never overwrites a new one.
 */
export function useLoad<T>(
  call: () => Promise<Answer<T>> | null,
  deps: unknown[],
): { data: T | null; error: ApiError | null } {
  const [state, setState] = useState<{ data: T | null; error: ApiError | null }>({ data: null, error: null });
  useEffect(() => {
    let live = true;
    setState({ data: null, error: null });
    void call()?.then(
      ({ data, error, response }) => {
        if (live)
          setState(data !== undefined ? { data, error: null } : { data: null, error: errorOf(error, response.status) });
      },
      () => live && setState({ data: null, error: NETWORK_ERROR }),
    );
    return () => {
      live = false;
    };
  }, deps); // the caller names what its call depends on
  return state;
}

export interface Action<A extends unknown[]> {
  /** Runs the call; while one runs, `busy` is true. Only the latest call's answer is used. */
  run(...args: A): Promise<void>;
  busy: boolean;
  error: ApiError | null;
  /** Forget the last error (the user changed what they were doing). */
  clearError(): void;
}

/**
 * A call the user starts (search, store, move, delete): busy while it runs, the catalogue error (or
 * NETWORK_ERROR) when it fails, `onData` with its answer when it succeeds. A call started later wins:
 * an earlier one answering last is dropped, and nothing is set once the component is gone.
 */
export function useAction<A extends unknown[], T>(
  call: (...args: A) => Promise<Answer<T>>,
  onData: (data: T, ...args: A) => void,
): Action<A> {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const latest = useRef(0);
  const mounted = useRef(true);
  const fns = useRef({ call, onData });
  fns.current = { call, onData };
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  const run = useCallback(async (...args: A) => {
    const mine = ++latest.current;
    setBusy(true);
    let answer: Answer<T> | null;
    try {
      answer = await fns.current.call(...args);
    } catch {
      answer = null;
    }
    if (!mounted.current || mine !== latest.current) return;
    setBusy(false);
    if (answer?.data !== undefined) {
      setError(null);
      fns.current.onData(answer.data, ...args);
    } else setError(answer ? errorOf(answer.error, answer.response.status) : NETWORK_ERROR);
  }, []);
  const clearError = useCallback(() => setError(null), []);
  return { run, busy, error, clearError };
}
