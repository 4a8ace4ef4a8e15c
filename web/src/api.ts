import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

/**
 * The REST API as the dashboard sees it: typed from openapi/openapi.json (src/schema.d.ts is generated
 * by `npm run web:types`), the API key (if any) sent as a bearer token on every call.
 */
export const api = createClient<paths>({ baseUrl: window.location.origin });

const KEY = 'devstream-hub.api-key';

/** The API key of this browser tab (session storage: gone when the tab closes). */
export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY),
  set: (key: string) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

/** Told when the service refuses the key (401) on any call: revoked while the page is open, say. */
const refusedListeners = new Set<() => void>();
export function onKeyRefused(listener: () => void): () => void {
  refusedListeners.add(listener);
  return () => refusedListeners.delete(listener);
}

const auth: Middleware = {
  onRequest({ request }) {
    const key = apiKey.get();
    if (key) request.headers.set('authorization', `Bearer ${key}`);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) for (const listener of refusedListeners) listener();
    return response;
  },
};
api.use(auth);

/** What a call that never got an answer (network down, service stopped) shows. */
export const NETWORK_ERROR: ApiError = { code: 'NETWORK_ERROR', message: 'the service could not be reached' };

/** The catalogue error of a failed call (`{error: {code, message, details}}`), for showing. */
export type ApiError = { code: string; message: string; details?: unknown };

export function errorOf(body: unknown, status: number): ApiError {
  const error = (body as { error?: ApiError } | undefined)?.error;
  return error ?? { code: `HTTP_${status}`, message: `the service answered ${status}` };
}

/** The JSON body of a route's 200 answer: `Json<'/api/v1/graphs', 'get'>`. */
export type Json<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer T } } };
}
  ? T
  : never;

export type Plan = Json<'/api/v1/plans', 'get'>['plans'][number];
