import type { AuthInfo, ServerContext } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/scopes.js';

/**
 * The SDK's `authInfo` of one HTTP request, carrying the caller its own credential made (the auth
 * hook authenticates every request). http-transport.ts hands it over with each request, `extra`
 * beside the caller.
 */
export function authInfoOf(caller: Caller, extra: Record<string, unknown> = {}): AuthInfo {
  return { token: '', clientId: caller.name ?? 'anonymous', scopes: [...caller.scopes], extra: { ...extra, caller } };
}

/**
 * Who an MCP request handler serves: the caller of the HTTP request that carried this message
 * (authInfoOf), else `fallback`, the caller the server was made for (a transport without HTTP: the
 * tests' in-memory ones). So a 2025-era session serves every request with the credential that
 * request carries — an access token stepped up to `write`, or signed in again with fewer projects —
 * and never with more than it grants because the session was opened with more.
 */
export function callerAt(ctx: Pick<ServerContext, 'http'> | undefined, fallback: Caller): Caller {
  return (ctx?.http?.authInfo?.extra?.caller as Caller | undefined) ?? fallback;
}
