import { useEffect, useState } from 'react';
import { errorOf, type ApiError } from './api';

/** What an openapi-fetch call resolves to. */
export type Answer<T> = { data?: T; error?: unknown; response: Response };

/**
 * The result of a REST call that runs again whenever `deps` change (`call` returning null: nothing to
 * load yet). An answer that arrives after the deps changed (the user moved on) is dropped, so a slow
 * old answer never overwrites a new one.
 */
export function useLoad<T>(call: () => Promise<Answer<T>> | null, deps: unknown[]): { data: T | null; error: ApiError | null } {
  const [state, setState] = useState<{ data: T | null; error: ApiError | null }>({ data: null, error: null });
  useEffect(() => {
    let live = true;
    setState({ data: null, error: null });
    void call()?.then(
      ({ data, error, response }) => {
        if (live) setState(data !== undefined ? { data, error: null } : { data: null, error: errorOf(error, response.status) });
      },
      () => live && setState({ data: null, error: { code: 'NETWORK_ERROR', message: 'the service could not be reached' } }),
    );
    return () => {
      live = false;
    };
  }, deps); // the caller names what its call depends on
  return state;
}
