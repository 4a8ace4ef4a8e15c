/**
 * The text a code-graph node's vector is made from (issue 21, the semantic channel): short, so an
 * embedder reads what the node *is* rather than a 990-line class body.
 */
import { cutText, isJsSpace, isLineTerminator } from '../text-scan.js';
import { identifierWords, proseDocument } from './search-document.js';

/** The longest embedding document (UTF-16 units): a small model's context holds it many times over. */
export const MAX_EMBED_DOC = 512;
/** The longest signature line kept. */
const MAX_SIGNATURE = 160;
/** Lines of code looked at to find the signature (comments and decorators are skipped), and at most this much of it. */
const MAX_SIGNATURE_LINES = 40;
const MAX_SIGNATURE_SCAN = 20_000;

/** Node types that get no vector: GHOST nodes are references to code the graph does not hold. */
const UNEMBEDDED_TYPES = new Set(['GHOST']);
/** Node types whose first line of code is not a signature (a file's is an import or a comment). */
const NO_SIGNATURE_TYPES = new Set(['FILE', 'TEST']);

export interface EmbeddableNode {
  name: string;
  type: string;
  /** The node's rawCode. */
  code: string | null;
  /** Its technical and business summaries, when it has them. */
  summaries: string[];
}

/**
 * `calculateDelay` with a JSDoc comment →
 * `calculate delay\nfunction calculateDelay(attempt: number, options: RetryOptions): number {\nExponential backoff…`:
 * the name's words, the first line of its signature (the first line of its code that is not a comment,
 * a decorator or blank; none for FILE and TEST nodes), and its summaries or, without them, its doc
 * comments (`doc`: pass the node's proseDocument when it is at hand, it is not computed again), at most
 * MAX_EMBED_DOC characters. Null for nodes that get no vector (GHOST) and for an empty document.
 */
export function nodeEmbeddingText(
  node: EmbeddableNode,
  doc: string = proseDocument(node.summaries, node.code),
): string | null {
  if (UNEMBEDDED_TYPES.has(node.type)) return null;
  const parts = [identifierWords(node.name)];
  if (node.code && !NO_SIGNATURE_TYPES.has(node.type)) parts.push(signatureLine(node.code));
  parts.push(doc.length > MAX_EMBED_DOC ? doc.slice(0, MAX_EMBED_DOC) : doc);
  const text = cutText(parts.filter((p) => p !== '').join('\n'), MAX_EMBED_DOC).trim();
  return text === '' ? null : text;
}

/**
 * The first line of `code` that is neither blank, a comment (`//`, `/*`, `*`, `#`) nor a decorator
 * (`@x`), trimmed and cut to MAX_SIGNATURE; '' when the first MAX_SIGNATURE_LINES lines hold none.
 * Linear: each character is looked at once at most.
 */
export function signatureLine(fullCode: string): string {
  const code = fullCode.length > MAX_SIGNATURE_SCAN ? fullCode.slice(0, MAX_SIGNATURE_SCAN) : fullCode;
  const length = code.length;
  let inBlock = false;
  for (let lineStart = 0, lines = 0; lineStart < length && lines < MAX_SIGNATURE_LINES; lines++) {
    let at = lineStart;
    while (at < length && isJsSpace(code.charCodeAt(at)) && !isLineTerminator(code.charCodeAt(at))) at++;
    let end = at;
    while (end < length && !isLineTerminator(code.charCodeAt(end))) end++;
    const line = code.slice(at, Math.min(end, at + 4 * MAX_SIGNATURE));
    lineStart = end + 1;
    if (inBlock) {
      if (code.slice(at, end).includes('*/')) inBlock = false;
      continue;
    }
    if (line === '' || line.startsWith('//') || line.startsWith('#') || line.startsWith('@') || line.startsWith('*'))
      continue;
    if (line.startsWith('/*')) {
      inBlock = !code.slice(at + 2, end).includes('*/');
      continue;
    }
    return cutText(line.replace(/\s+/g, ' ').trim(), MAX_SIGNATURE);
  }
  return '';
}
