import type { Context } from '../domain/context.js';
import { fromDbError, isDbError } from '../db/errors.js';
import { requireScope, type Scope } from '../auth/scopes.js';
import { AppError } from '../errors.js';
import { parseInput, type AnyOperation } from './operation.js';

/**
 * Validates raw arguments and runs the operation: the one call path behind every MCP tool call and
 * REST request. Any failure comes out as an AppError with a catalogue code.
 */
export async function invoke(
  op: AnyOperation,
  ctx: Context,
  raw: unknown,
): Promise<{ input: unknown; output: unknown }> {
  requireScope(ctx.caller, op.scope, op.name);
  const input = parseInput(op, raw);
  if (op.scopeFor) requireScope(ctx.caller, op.scopeFor(input), op.name);
  try {
    const output = await op.handler(ctx, input);
    return { input, output };
  } catch (error) {
    throw toAppError(error, op.action);
  }
}

/**
 * The scope a call of `op` with these raw arguments needs, as `invoke` will check it: the
 * operation's own, or the one its arguments make it need (`scopeFor`: `repo` analyze is write) when
 * they are valid. For refusing a call before it is handed over (MCP step-up, http-transport.ts).
 */
export function neededScope(op: AnyOperation, raw: unknown): Scope {
  if (!op.scopeFor) return op.scope;
  const parsed = op.input.safeParse(raw ?? {});
  return parsed.success ? op.scopeFor(parsed.data as never) : op.scope;
}

/** Any thrown value as a catalogue error; database failures are mapped by SQLSTATE. */
export function toAppError(error: unknown, action: string): AppError {
  if (error instanceof AppError) return error;
  if (isDbError(error)) return fromDbError(error);
  return new AppError('INTERNAL_ERROR', 'an unexpected error occurred', { cause: error, details: { action } });
}
