import { AppError, validationError } from '../../errors.js';
import { isWellFormed, unstorable } from '../fields.js';

/**
 * The checks every value of an uploaded commit file passes (one concept: what the upload can
 * store as sent), shared by the node and edge rows and the top-level fields; each failure is a
 * VALIDATION_ERROR naming the field (`nodes[3].metadata`).
 */

export const MAX_TEXT = 200;
/** Longest node id, name or edge end in UTF-8 bytes: they are btree index keys (Postgres refuses entries over ~2.7 kB). */
export const MAX_KEY_BYTES = 2000;

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function bad(field: string, message: string): AppError {
  return validationError([{ field, message }]);
}

/**
 * Refuses what Postgres cannot store as sent, anywhere in a value of the file (keys too): a lone
 * UTF-16 surrogate (no UTF-8 form; analyzers reading UTF-8 source never produce one). NUL
 * characters pass: source code may hold them; jsonParam drops them. (Nesting deeper than
 * UPLOAD_LIMITS.maxDepth never gets here: the reader refuses it while tokenising.)
 */
export function checkValue(value: unknown, field: string): void {
  if (typeof value === 'string') {
    if (!isWellFormed(value)) throw bad(field, 'must be well-formed Unicode (no lone surrogates)');
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) checkValue(value[i], `${field}[${i}]`);
    return;
  }
  for (const [key, v] of Object.entries(value)) {
    const problem = unstorable(key);
    if (problem) throw bad(field, `key ${JSON.stringify(key)}: ${problem}`);
    checkValue(v, `${field}.${key}`);
  }
}

/** A node id, name or edge end: at most MAX_KEY_BYTES of UTF-8. */
export function keyText(v: string, field: string): void {
  if (Buffer.byteLength(v, 'utf8') > MAX_KEY_BYTES) throw bad(field, `must be at most ${MAX_KEY_BYTES} bytes (UTF-8)`);
}
