/**
 * The words a code-graph node is found by (design.md §7): its name and the name's parts, its
 * path's parts, and — for nodes without summaries — the doc comments and identifiers of its code.
 * Identifiers are matched with Postgres' `simple` configuration (no stemming: `getUser` must not
 * match `get used`), prose with `english`.
 *
 * Everything here reads uploaded text, so every step is linear in its input (issue 19: a
 * backtracking regex over 200,000 newlines held the event loop for 53 s): regexes only where a
 * ReDoS checker finds them linear (test/hostile-text.test.ts), small scanners where a regex was not.
 */
import { cutText, isJsSpace, isLineTerminator } from '../text-scan.js';

/** `createUser` → `create user`; `HTTP2Server` → `http 2 server`; `get_user.byId` → `get user by id`. */
export function identifierWords(identifier: string): string {
  return (
    identifier
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      // The last capital of a run before a lower-case letter starts a word (`HTTPServer` → `HTTP Server`).
      // A lookahead, not `([A-Z]+)([A-Z][a-z])`: that one backtracked through every run of capitals from each of its letters.
      .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
      .replace(/([A-Za-z])(\d)/g, '$1 $2')
      .replace(/(\d)([A-Za-z])/g, '$1 $2')
      .replace(/[^A-Za-z0-9]+/g, ' ')
      .trim()
      .toLowerCase()
  );
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

/**
 * A path's words are read from this much of it at most: over twice Linux's PATH_MAX (4,096
 * bytes), so only a path no file system holds is cut (the upload does not bound `filePath`).
 */
export const MAX_PATH_SCAN = 10_000;

/** `source/core/Ky.ts` → `source core ky ts`. */
export function pathDocument(filePath: string): string {
  return identifierWords(filePath.length > MAX_PATH_SCAN ? filePath.slice(0, MAX_PATH_SCAN) : filePath);
}

/** At most this much text is drawn from a node's code (doc comments first, then identifiers). */
const MAX_CODE_TEXT = 4000;
/**
 * Doc comments and identifiers are read from this much of a node's code at most (UTF-16 units):
 * 20 times what the analyzer keeps of a node's code (MAX_CODE_CHARS, 50,000), so no analyzed node
 * is cut, while one node of a hostile upload (up to GRAPH_UPLOAD_LIMIT of code) costs milliseconds.
 */
export const MAX_CODE_SCAN = 1_000_000;

/**
 * The bodies of `/* … *\/` and `/** … *\/` comments, as `/\/\*\*?([\s\S]*?)\*\//g` captured them
 * (a `/**` comment that closes only later keeps its `/`: `/**\/ x *\/` → `/ x `). By indexOf: the
 * regex searched the rest of the code again from every unclosed `/*` (quadratic).
 */
function* blockComments(code: string): Generator<string> {
  for (let at = code.indexOf('/*'); at !== -1;) {
    const open = at + 2;
    let body = open;
    let close = -1;
    if (code[open] === '*') {
      body = open + 1;
      close = code.indexOf('*/', body);
    }
    if (close === -1) {
      body = open;
      close = code.indexOf('*/', open);
    }
    if (close === -1) return; // nothing closes after this point, so no later `/*` can close either
    yield code.slice(body, close);
    at = code.indexOf('/*', close + 2);
  }
}

/** The bodies of `// …` comments (not the `//` of a URL); this regex is linear. */
function* lineComments(code: string): Generator<string> {
  for (const m of code.matchAll(/(?:^|[^:])\/\/(.*)$/gm)) yield m[1]!;
}

/**
 * The text after `#` of lines that start with one after blanks (Python, shell; not a shebang), as
 * `/^\s*#(?!!)(.*)$/gm` captured it. A scanner: that regex's `\s*` spans lines, so it ran over every
 * remaining blank line from each line start (quadratic in a run of newlines).
 */
function* hashComments(code: string): Generator<string> {
  const length = code.length;
  for (let lineStart = 0; lineStart <= length;) {
    let at = lineStart;
    while (at < length && isJsSpace(code.charCodeAt(at))) at++;
    const comment = code.charCodeAt(at) === 0x23 /* # */ && code.charCodeAt(at + 1) !== 0x21; /* ! */
    let end = comment ? at + 1 : at;
    while (end < length && !isLineTerminator(code.charCodeAt(end))) end++;
    if (comment) yield code.slice(at + 1, end);
    lineStart = end + 1; // a line start inside the blanks skipped ends at the same place: none is tried again
  }
}

/** Python docstrings' bodies; this regex is linear (an unclosed `"""` is searched past once). */
function* docstrings(code: string): Generator<string> {
  for (const m of code.matchAll(/("""|''')([\s\S]*?)\1/g)) yield m[2]!;
}

/**
 * `text` with each line's leading blanks and `*`s replaced by one space, as
 * `.replace(/^\s*\*+/gm, ' ')` did (the blanks may span lines), in one pass.
 */
function dropLeadingStars(text: string): string {
  const length = text.length;
  let out = '';
  let copied = 0;
  for (let lineStart = 0; lineStart <= length;) {
    let at = lineStart;
    while (at < length && isJsSpace(text.charCodeAt(at))) at++;
    if (text.charCodeAt(at) === 0x2a /* * */) {
      let stars = at;
      while (text.charCodeAt(stars) === 0x2a) stars++;
      out += `${text.slice(copied, lineStart)} `;
      copied = stars;
      at = stars;
    }
    while (at < length && !isLineTerminator(text.charCodeAt(at))) at++;
    lineStart = at + 1;
  }
  return out + text.slice(copied);
}

const COMMENTS = [blockComments, lineComments, hashComments, docstrings];

/** How many characters of `text` are not blanks: each one survives whitespace collapsing. */
function solidLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (!isJsSpace(text.charCodeAt(i))) n++;
  return n;
}

/**
 * Comments and docstrings of a piece of code, as prose: block comments, then line comments, then
 * `#` comments, then docstrings, whitespace collapsed, at most MAX_CODE_TEXT characters. Reads at
 * most MAX_CODE_SCAN characters of the code, and stops once what it found fills MAX_CODE_TEXT
 * (the rest could only come after the cut).
 */
export function docText(code: string): string {
  const source = code.length > MAX_CODE_SCAN ? code.slice(0, MAX_CODE_SCAN) : code;
  const parts: string[] = [];
  let solid = 0;
  found: for (const comments of COMMENTS) {
    for (const body of comments(source)) {
      const part = dropLeadingStars(body).replace(/@\w+/g, ' ');
      parts.push(part);
      solid += solidLength(part);
      if (solid >= MAX_CODE_TEXT) break found;
    }
  }
  return cutText(parts.join(' ').replace(/\s+/g, ' ').trim(), MAX_CODE_TEXT);
}

/**
 * Most characters of a node's summaries (technical and business together), and of its security
 * note, that go into its search document: Postgres refuses a text search vector over 1 MB (54000),
 * which 200,000 distinct words once made a 500. The stored summaries are kept whole.
 */
export const MAX_SUMMARY_DOC = 100_000;

/** The prose of a node's search document: its summaries and its code's documentation. */
export function proseDocument(summaries: string[], code: string | null): string {
  const doc = code ? docText(code) : '';
  if (summaries.length === 0) return doc;
  return cutText(`${summaries.join(' ')} ${doc}`, MAX_SUMMARY_DOC);
}

/** Most characters of a node's first code line read as its signature. */
const MAX_SIGNATURE = 400;

/**
 * A node's signature as its search document reads it: the first line of its code that is not blank,
 * a comment or a decorator (TypeScript `rawCode` starts at the declaration; Python's may start with
 * `@decorator` lines), at most MAX_SIGNATURE characters.
 */
export function signatureLine(code: string): string {
  let at = 0;
  for (let lines = 0; at < code.length && lines < 20; lines++) {
    let end = code.indexOf('\n', at);
    if (end === -1) end = code.length;
    const line = code.slice(at, Math.min(end, at + MAX_SIGNATURE)).trim();
    if (
      line !== '' &&
      !line.startsWith('@') &&
      !line.startsWith('//') &&
      !line.startsWith('#') &&
      !line.startsWith('/*') &&
      !line.startsWith('*')
    )
      return line;
    at = end + 1;
  }
  return '';
}

/** The security note's part of the search document. */
export const securityDocument = (summary: string | null): string => (summary ? cutText(summary, MAX_SUMMARY_DOC) : '');

/** The distinct identifiers of a piece of code (its first MAX_CODE_SCAN characters), split into words. */
export function identifierText(code: string): string {
  const source = code.length > MAX_CODE_SCAN ? code.slice(0, MAX_CODE_SCAN) : code;
  const seen = new Set<string>();
  const words: string[] = [];
  let length = 0;
  for (const m of source.matchAll(/[A-Za-z_$][A-Za-z0-9_$]{2,}/g)) {
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
