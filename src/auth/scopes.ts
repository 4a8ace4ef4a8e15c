import { AppError } from '../errors.js';
import type { ToolProfileName } from './tool-profiles.js';

/** `read`: list/search/get; `write`: create/update/store/delete/upload; `admin`: API keys. */
export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * Who is calling: the API key's name (recorded as created_by), null when AUTH=off; its scopes; the
 * key's default MCP tool profile, when it has one.
 */
export interface Caller {
  name: string | null;
  scopes: ReadonlySet<Scope>;
  toolProfile?: ToolProfileName;
  /** Projects this caller may see (lower-cased titles); undefined: every project. */
  projects?: ReadonlySet<string> | undefined;
  /** Code graphs (repo names, lower-cased) this caller may see; undefined: every graph. */
  repos?: ReadonlySet<string> | undefined;
  /** Set for a caller made from the identity provider's access token (not an API key or ADMIN_TOKEN). */
  viaToken?: true;
}

/** What the caller's credential is called in a refusal: "this API key", or "this access token". */
export const credentialOf = (caller: Caller): string => (caller.viaToken ? 'this access token' : 'this API key');

/** Throws FORBIDDEN unless the caller holds `scope`; `what` names the refused action. */
export function requireScope(caller: Caller, scope: Scope, what: string): void {
  if (caller.scopes.has(scope)) return;
  const held = [...caller.scopes].join(', ') || 'none';
  throw new AppError('FORBIDDEN', `${what} needs the "${scope}" scope; ${credentialOf(caller)} has: ${held}`, {
    details: { required: scope, scopes: [...caller.scopes] },
  });
}
