import { injectedAmong, recordInjected, type HookSessionKey } from '../../db/queries/hook-sessions.js';
import type { Context } from '../context.js';
import type { HookInput } from './hook-input.js';
import type { HookScope } from './hook-scope.js';

/** The service's hook settings (HOOK_CONTEXT_TOKENS, HOOK_CAPTURE, HOOK_SESSION_TTL). */
export interface HookSettings {
  /** Budget of one answer's context, in tokens (chars / 4); never over 10,000 characters. */
  contextTokens: number;
  /** Record what sessions touch and store it as one `context` memory when they end. */
  capture: boolean;
  /** How long a session's dedup records and capture are kept after its last hook. */
  sessionTtlMs: number;
}

/** One hook call: its input, who and what it is about, and the session's memory of what it was given. */
export interface HookCall {
  ctx: Context;
  input: HookInput;
  scope: HookScope;
  /** Absent without a session_id: nothing is deduplicated or captured. */
  session: HookSessionKey | undefined;
  settings: HookSettings;
  /** `?commit=` on the URL: the commit the session's checkout is at (SessionStart's freshness line). */
  commit: string | undefined;
}

/** Of `items`, those not given to this session yet, in order. */
export async function notGivenYet(call: HookCall, items: readonly string[]): Promise<Set<string>> {
  if (!call.session) return new Set(items);
  const given = await injectedAmong(call.ctx.db, call.session, items);
  return new Set(items.filter((i) => !given.has(i)));
}

/** Records that the session was given `items`. */
export async function given(call: HookCall, items: readonly string[]): Promise<void> {
  if (call.session) await recordInjected(call.ctx.db, call.session, items, call.settings.sessionTtlMs);
}
