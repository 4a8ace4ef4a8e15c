import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { credentialOf, type Caller } from '../auth/scopes.js';

/**
 * Throws unless the caller holds the read scope: what resources, prompts and completions give is
 * what the read scope reads (tasks, plans, memories, graphs), and they are no tools, so `invoke`'s
 * scope check does not run for them. An invalid-request error saying FORBIDDEN, as tools say it.
 */
export function requireRead(caller: Caller, what: string): void {
  if (caller.scopes.has('read')) return;
  const held = [...caller.scopes].join(', ') || 'none';
  throw new ProtocolError(
    ProtocolErrorCode.InvalidRequest,
    `FORBIDDEN: ${what} needs the "read" scope; ${credentialOf(caller)} has: ${held}`,
  );
}
