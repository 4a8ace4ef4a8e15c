import type { EdgeRow } from '../../db/queries/graphs/ingest.js';
import { EDGE_COLUMNS } from '../../commit-file.js';
import { bad, checkValue, isObject, keyText, MAX_TEXT } from './upload-checks.js';

/**
 * Validates one edge of the file and turns it into a row (`field` names it in errors, e.g.
 * `edges[3]`): its metadata object, and any field of the edge not kept in a column, become its
 * metadata.
 */
export function edgeRow(raw: unknown, seq: number, field: string): EdgeRow {
  if (!isObject(raw)) throw bad(field, 'must be an object');
  checkValue(raw, field);
  const { from, to, type } = raw;
  if (typeof from !== 'string' || from === '') throw bad(`${field}.from`, 'must be a non-empty string');
  if (typeof to !== 'string' || to === '') throw bad(`${field}.to`, 'must be a non-empty string');
  keyText(from, `${field}.from`);
  keyText(to, `${field}.to`);
  if (typeof type !== 'string' || type === '' || type.length > MAX_TEXT)
    throw bad(`${field}.type`, 'must be a non-empty string of at most 200 characters');
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) if (!EDGE_COLUMNS.has(k)) extra[k] = v;
  // An edge's metadata object, with any other field of the edge beside it.
  const { metadata, ...rest } = extra;
  const merged = isObject(metadata) ? { ...rest, ...metadata } : metadata === undefined ? rest : { ...rest, metadata };
  return { seq, from_id: from, to_id: to, type, metadata: Object.keys(merged).length > 0 ? merged : null };
}
