import { createContext, useContext } from 'react';
import type { paths } from './schema';

/** Who is signed in (GET /api/v1/me): the key's name (null when AUTH=off) and its scopes. */
export type Me = paths['/api/v1/me']['get']['responses']['200']['content']['application/json'];
export type Scope = Me['scopes'][number];

export const MeContext = createContext<Me>({ name: null, scopes: ['read'], projects: null, repos: null });

/** Whether the signed-in key holds `scope`: pages show write controls only to keys that may use them. */
export function useCan(scope: Scope): boolean {
  return useContext(MeContext).scopes.includes(scope);
}
