/**
 * The words a code-graph node is found by (design.md §7): its name and the name's parts, its
 * path's parts, and — for nodes without summaries — the doc comments and identifiers of its code.
 * Identifiers are matched with Postgres' `simple` configuration (no stemming: `getUser` must not
 * match `get used`), prose with `english`.
 */

/** `createUser` → `create user`; `HTTP2Server` → `http 2 server`; `get_user.byId` → `get user by id`. */
export function identifierWords(identifier: string): string {
  return identifier
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([A-Za-z])(\d)/g, '$1 $2')
    .replace(/(\d)([A-Za-z])/g, '$1 $2')
    .replace(/[^A-Za-z0-9]+/g, ' ')
    .trim()
    .toLowerCase();
}

/**
 * A name, its dotted segments and its words: `Ky.retryFromError` →
 * `ky.retryfromerror ky retryfromerror ky retry from error` (so `retryFromError` finds the method).
 */
export function nameDocument(name: string): string {
  const whole = name.toLowerCase().replace(/\s+/g, ' ');
  const segments = whole.split(/[^a-z0-9_$]+/).filter(Boolean);
  const parts = identifierWords(name);
  return [...new Set([whole, segments.join(' '), parts])].filter(Boolean).join(' ');
}

/** `source/core/Ky.ts` → `source core ky ts`. */
export function pathDocument(filePath: string): string {
  return identifierWords(filePath);
}

/** At most this much text is drawn from a node's code (doc comments first, then identifiers). */
const MAX_CODE_TEXT = 4000;

const COMMENT_PATTERNS = [
  /\/\*\*?([\s\S]*?)\*\//g, // /* … */ and /** … */
  /(?:^|[^:])\/\/(.*)$/gm, // // … (not the // of a URL)
  /^\s*#(?!!)(.*)$/gm, // # … (Python, shell; not a shebang)
  /("""|''')([\s\S]*?)\1/g, // Python docstrings
];

/** Comments and docstrings of a piece of code, as prose. */
export function docText(code: string): string {
  const parts: string[] = [];
  for (const pattern of COMMENT_PATTERNS) {
    for (const m of code.matchAll(pattern)) {
      const body = m[m.length - 1] ?? '';
      parts.push(body.replace(/^\s*\*+/gm, ' ').replace(/@\w+/g, ' '));
    }
  }
  return parts.join(' ').replace(/\s+/g, ' ').trim().slice(0, MAX_CODE_TEXT);
}

/** The distinct identifiers of a piece of code, split into words. */
export function identifierText(code: string): string {
  const seen = new Set<string>();
  const words: string[] = [];
  let length = 0;
  for (const m of code.matchAll(/[A-Za-z_$][A-Za-z0-9_$]{2,}/g)) {
    if (seen.has(m[0])) continue;
    seen.add(m[0]);
    const w = identifierWords(m[0]);
    if (!w) continue;
    words.push(w);
    length += w.length + 1;
    if (length > MAX_CODE_TEXT) break;
  }
  return words.join(' ');
}
