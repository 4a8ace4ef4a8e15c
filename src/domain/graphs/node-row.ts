import type { NodeRow } from '../../db/queries/graphs/ingest.js';
import { NODE_COLUMNS } from '../../commit-file.js';
import { nodeEmbeddingText } from './node-embedding-text.js';
import {
  identifierText,
  identifierWords,
  nameDocument,
  pathDocument,
  proseDocument,
  securityDocument,
  signatureLine,
} from './search-document.js';
import { bad, checkValue, isObject, keyText, MAX_TEXT } from './upload-checks.js';

const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v : null);

function line(v: unknown, field: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 2_147_483_647)
    throw bad(field, 'must be a whole number ≥ 0');
  return v;
}

/** Validates one node of the file and turns it into a row (`field` names it in errors, e.g. `nodes[12]`). */
export function nodeRow(raw: unknown, seq: number, field: string): NodeRow {
  if (!isObject(raw)) throw bad(field, 'must be an object');
  checkValue(raw, field);
  const { id, name, type, filePath } = raw;
  if (typeof id !== 'string' || id.trim() === '') throw bad(`${field}.id`, 'must be a non-empty string');
  keyText(id, `${field}.id`);
  if (typeof type !== 'string' || type.trim() === '' || type.length > MAX_TEXT)
    throw bad(`${field}.type`, 'must be a non-empty string of at most 200 characters');
  if (name !== undefined && typeof name !== 'string') throw bad(`${field}.name`, 'must be a string');
  if (typeof name === 'string') keyText(name, `${field}.name`);
  if (filePath !== undefined && filePath !== null && typeof filePath !== 'string')
    throw bad(`${field}.filePath`, 'must be a string');
  const metadata = raw.metadata;
  if (metadata !== undefined && metadata !== null && !isObject(metadata))
    throw bad(`${field}.metadata`, 'must be an object');
  const security = raw.security;
  if (security !== undefined && security !== null && !isObject(security))
    throw bad(`${field}.security`, 'must be an object');
  const score = raw.score;
  if (score !== undefined && score !== null && (typeof score !== 'number' || !Number.isFinite(score)))
    throw bad(`${field}.score`, 'must be a number');
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) if (!NODE_COLUMNS.has(k)) extra[k] = v;

  const nodeName = typeof name === 'string' && name !== '' ? name : (id.split('::').pop() ?? id);
  const path = typeof filePath === 'string' ? filePath : '';
  const code = typeof raw.rawCode === 'string' ? raw.rawCode : null;
  const technical = str(raw.technicalSummary);
  const business = str(raw.businessSummary);
  const summaries = [technical, business].filter((t): t is string => t !== null);
  // Summaries and the code's own documentation; its identifiers besides (issue 21: a summary no
  // longer hides them).
  const prose = proseDocument(summaries, code);
  return {
    seq,
    node_id: id,
    name: nodeName,
    type,
    file_path: path,
    start_line: line(raw.startLine, `${field}.startLine`),
    end_line: line(raw.endLine, `${field}.endLine`),
    technical_summary: technical,
    business_summary: business,
    security_severity: security ? (str(security.severity) ?? null) : null,
    security_summary: security ? (str(security.summary) ?? null) : null,
    code,
    score: typeof score === 'number' ? score : null,
    metadata: isObject(metadata) ? metadata : null,
    extra: Object.keys(extra).length > 0 ? extra : null,
    name_doc: nameDocument(nodeName),
    name_words: identifierWords(nodeName),
    path_doc: pathDocument(path),
    signature_doc: code ? identifierText(signatureLine(code)) : '',
    prose,
    idents: code ? identifierText(code) : '',
    security_doc: securityDocument(security ? (str(security.summary) ?? null) : null),
    embed_doc: nodeEmbeddingText({ name: nodeName, type, code, summaries }, prose),
  };
}
