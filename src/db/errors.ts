import { AppError } from '../errors.js';

/** SQLSTATE classes and codes that mean "the database is not reachable right now". */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  'EHOSTUNREACH',
]);
/**
 * What node-postgres says when it loses or cannot get a connection (these carry no code); "not
 * queryable": a query on a client whose connection broke between statements (in a transaction).
 */
const CONNECTION_LOST =
  /timeout exceeded when trying to connect|Connection terminated|has encountered a connection error and is not queryable/i;

/**
 * True when the database cannot be reached right now but may be soon (not listening yet, starting,
 * shutting down, out of connections, a dropped connection): worth waiting for. A wrong password
 * (28P01), a missing database (3D000) or missing rights are not: no retry mends them.
 */
export function isUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (
    code.startsWith('08') ||
    UNAVAILABLE_SQLSTATES.has(code) ||
    UNAVAILABLE_NODE_CODES.has(code) ||
    code === 'EAI_AGAIN'
  )
    return true;
  return typeof e?.message === 'string' && CONNECTION_LOST.test(e.message);
}

/** True when `error` came from the database or the driver (a SQLSTATE, a socket error, a lost connection). */
export function isDbError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string' && (/^[0-9A-Z]{5}$/.test(code) || UNAVAILABLE_NODE_CODES.has(code))) return true;
  return error instanceof Error && CONNECTION_LOST.test(error.message);
}

/**
 * Maps a database failure to the catalogue, in one place (as supabase/storage's DBError does):
 * unique violation → CONFLICT, check/format violations → VALIDATION_ERROR, connection loss → 503,
 * anything else → DATABASE_ERROR. The driver's message is not shown to callers (it can carry data).
 */
export function fromDbError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const e = error as { code?: string; message?: string; constraint?: string };
  const code = typeof e?.code === 'string' ? e.code : '';
  const detail = { sqlstate: code || undefined, constraint: e?.constraint };
  if (code === '23505')
    return new AppError('CONFLICT', 'a row with the same unique value exists', { details: detail, cause: error });
  if (code === '23514' || code === '23502' || code.startsWith('22')) {
    return new AppError('VALIDATION_ERROR', `the value breaks a database rule (${e.constraint ?? code})`, {
      details: detail,
      cause: error,
    });
  }
  if (code === '57014') return new AppError('DATABASE_ERROR', 'the query timed out', { details: detail, cause: error });
  if (isUnavailable(error)) {
    return new AppError('DATABASE_ERROR', 'the database is unreachable', {
      status: 503,
      details: detail,
      cause: error,
    });
  }
  return new AppError('DATABASE_ERROR', 'the database failed the operation', { details: detail, cause: error });
}
