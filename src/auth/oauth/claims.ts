import type { OAuthConfig } from '../../config.js';
import { AppError } from '../../errors.js';
import type { Caller, Scope } from '../scopes.js';

/**
 * Whether `caller` came from an IdP's access token (not an API key or ADMIN_TOKEN): its rate limits
 * and MCP sessions are kept apart from keys'.
 */
export const isTokenCaller = (caller: Caller): boolean => caller.viaToken === true;

/** Longest caller name taken from a token (it is recorded as created_by). */
const MAX_SUBJECT = 200;

export type Claims = Record<string, unknown>;

const words = (value: unknown): string[] =>
  typeof value === 'string'
    ? value.split(/[\s,]+/).filter(Boolean)
    : Array.isArray(value)
      ? value.filter((v): v is string => typeof v === 'string' && v !== '')
      : [];

/**
 * The hub scopes a token grants: its `scope` (space-separated, RFC 8693/9068), `scp` (Okta, Entra ID:
 * a string or an array) and `roles` (Entra ID app roles of client-credentials tokens), each name
 * mapped through OAUTH_SCOPE_MAP; names the map lacks grant nothing.
 */
export function scopesOf(claims: Claims, map: OAuthConfig['scopeMap']): Set<Scope> {
  const granted = new Set<Scope>();
  for (const name of [
    ...(typeof claims.scope === 'string' ? claims.scope.split(' ') : []),
    ...words(claims.scp),
    ...(Array.isArray(claims.roles) ? words(claims.roles) : []),
  ]) {
    const scope = map.get(name);
    if (scope) granted.add(scope);
  }
  return granted;
}

/** The caller's name: the first claim of OAUTH_SUBJECT_CLAIM the token has (an email only when not marked unverified). */
export function subjectOf(claims: Claims, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = claims[name];
    if (typeof value !== 'string' || value.trim() === '') continue;
    if (name === 'email' && claims.email_verified === false) continue;
    const subject = value.trim();
    // Control characters would reach logs and created_by verbatim.
    if (subject.length > MAX_SUBJECT || /\p{Cc}/u.test(subject)) return undefined;
    return subject;
  }
  return undefined;
}

/**
 * The names a token's limit claim lists (OAUTH_PROJECTS_CLAIM, OAUTH_REPOS_CLAIM: an array, or a
 * space- or comma-separated string), lower-cased; `*` among them: no limit. When the claim is
 * configured and the token lacks it, none: a limit that is configured is never lifted by leaving it out.
 */
export function limitOf(claims: Claims, claim: string | undefined): ReadonlySet<string> | undefined {
  if (claim === undefined) return undefined;
  const names = words(claims[claim]).map((p) => p.trim().toLowerCase());
  return names.includes('*') ? undefined : new Set(names);
}

/**
 * The caller a verified token's claims make: its subject (recorded as created_by), its mapped
 * scopes, its projects and repos. Throws UNAUTHORIZED without a subject and FORBIDDEN (an HTTP-level 403 with
 * `insufficient_scope`, see http/auth.ts) when it grants none of the hub's scopes.
 */
export function callerFromClaims(claims: Claims, config: OAuthConfig): Caller {
  const name = subjectOf(claims, config.subjectClaims);
  if (name === undefined)
    throw new AppError(
      'UNAUTHORIZED',
      `The access token names no caller: none of its claims ${config.subjectClaims.join(', ')} is a usable name (OAUTH_SUBJECT_CLAIM)`,
    );
  const scopes = scopesOf(claims, config.scopeMap);
  if (scopes.size === 0)
    throw new AppError(
      'FORBIDDEN',
      `The access token grants none of this hub's scopes (${[...config.scopeMap.keys()].join(', ')})`,
      { details: { required: 'read', scopes: [] } },
    );
  const projects = limitOf(claims, config.projectsClaim);
  const repos = limitOf(claims, config.reposClaim);
  return { name, scopes, viaToken: true, ...(projects ? { projects } : {}), ...(repos ? { repos } : {}) };
}
