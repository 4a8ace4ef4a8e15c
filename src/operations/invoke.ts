import type { Context } from '../domain/context.js';
import type { Logger } from '../logger.js';
import { fromDbError, isDbError } from '../db/errors.js';
import { requireScope } from '../auth/scopes.js';
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

/** Any thrown value as a catalogue error; database failures are mapped by SQLSTATE. */
export function toAppError(error: unknown, action: string): AppError {
  if (error instanceof AppError) return error;
  if (isDbError(error)) return fromDbError(error);
  return new AppError('INTERNAL_ERROR', 'an unexpected error occurred', { cause: error, details: { action } });
}

/** Who to blame: 5xx errors are the service's and are logged with their cause; 4xx are the caller's. */
export function isServerFault(error: AppError): boolean {
  return error.status >= 500;
}

/** While the database is unreachable, one warning per this long, not one per request. */
const UNAVAILABLE_LOG_EVERY_MS = 5_000;
let unavailableLoggedAt = -Infinity;
let unavailableSuppressed = 0;

/**
 * Logs a failed request or tool call when it is the service's fault: with its cause and stack at
 * error level, except for 503s (the database is unreachable), which are temporary, expected during a
 * restart and all alike: a warning every few seconds with the count of those not logged.
 */
export function logFault(
  log: Pick<Logger, 'warn' | 'error'>,
  error: AppError,
  thrown: unknown,
  bindings: Record<string, unknown> = {},
): void {
  if (!isServerFault(error) || error.code === 'SHUTTING_DOWN') return;
  if (error.status !== 503) {
    log.error({ ...bindings, err: thrown }, 'request failed');
    return;
  }
  const now = performance.now();
  if (now - unavailableLoggedAt < UNAVAILABLE_LOG_EVERY_MS) {
    unavailableSuppressed += 1;
    return;
  }
  // The driver's own words (ECONNREFUSED, 57P01 …) are the cause of the catalogue error.
  const cause = (error.cause ?? thrown) as { message?: string; code?: string } | undefined;
  log.warn(
    {
      ...bindings,
      code: error.code,
      cause: cause?.message,
      cause_code: cause?.code,
      similar_not_logged_since_last_warning: unavailableSuppressed,
    },
    `${error.message}: answering 503`,
  );
  unavailableLoggedAt = now;
  unavailableSuppressed = 0;
}
