/**
 * The text a `resolve_context` packet shows of each node — its one-line meaning, the lines of its
 * code that name the task's words, its security note — read from stored, uploaded text. Each is
 * read only as far as it is shown (issue 19: a summary of 60,000 `<` cost 7 s per packet through
 * a backtracking regex), and computed once per node however often the packet is re-rendered
 * while it is fitted to its budget.
 */
import type { PacketNodeRow } from '../../db/queries/graphs/node-reads.js';
import { isJsSpace } from '../text-scan.js';
import { metaText, nodeMeta } from './node-meta.js';
import { identifierWords } from './search-document.js';
import { STOP_WORDS } from './stop-words.js';

const MICRO_CHARS = 120;
const SNIPPET_CHARS = 160;
const SECURITY_CHARS = 200;

/**
 * The first `n` characters of `html` without its tags, blanks collapsed to one space and trimmed:
 * what `.replace(/<[^>]*>/g, '').replace(/\s+/g, ' ').trim().slice(0, n)` gave, in one pass that
 * stops there. A tag runs from `<` to the next `>`; a `<` with no `>` after it is text, and so is
 * everything after it. (That regex searched the rest of the text from every `<`: quadratic.)
 */
export function plainTextPrefix(html: string, n: number): string {
  let out = '';
  let blank = false; // a blank run was seen since the last character kept
  let unclosed = false; // no `>` follows: no `<` from here on opens a tag
  for (let i = 0; i < html.length && out.length < n; i++) {
    const c = html.charCodeAt(i);
    if (c === 0x3c /* < */ && !unclosed) {
      const close = html.indexOf('>', i + 1);
      if (close !== -1) {
        i = close;
        continue;
      }
      unclosed = true;
    }
    if (isJsSpace(c)) {
      blank = out.length > 0;
      continue;
    }
    if (blank) out += ' ';
    blank = false;
    out += html[i];
  }
  return out.length > n ? out.slice(0, n) : out;
}

/** The first `n` characters of `text` with each blank run as one space (not trimmed): `.replace(/\s+/g, ' ').slice(0, n)`, stopping there. */
export function collapsedPrefix(text: string, n: number): string {
  let out = '';
  let blank = false;
  for (let i = 0; i < text.length && out.length < n; i++) {
    if (isJsSpace(text.charCodeAt(i))) {
      if (!blank) out += ' ';
      blank = true;
    } else {
      out += text[i];
      blank = false;
    }
  }
  return out;
}

/** The first sentence of a summary, without HTML, clipped: the packet's one-line meaning. */
export function microSummary(row: Pick<PacketNodeRow, 'business_summary' | 'technical_summary'>): string | null {
  // The answer depends on the first MICRO_CHARS + 1 characters only: a sentence that ends within
  // MICRO_CHARS is there whole, with the blank (or the end) after it; any longer one is clipped.
  const text = plainTextPrefix(row.business_summary ?? row.technical_summary ?? '', MICRO_CHARS + 1);
  if (!text) return null;
  const sentence = /^(.+?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
  return sentence.length > MICRO_CHARS ? `${sentence.slice(0, MICRO_CHARS - 1)}…` : sentence;
}

/**
 * Up to `limit` lines of a node's code that name a word of the task, with their line numbers; reads
 * the code only until they are found. `words` (identifiers and their parts) match anywhere in a
 * line; `prefixes` (the task's plain words, stemmed) only where a word starts — after a character
 * that is not a letter or digit, or at a camelCase capital — so `retr` finds `retryCount` and
 * `calculateRetry` but `work` does not find `network`. Lines naming an identifier come first, then
 * lines naming only a plain word, each in the code's order.
 */
export function snippetLines(
  row: Pick<PacketNodeRow, 'code' | 'start_line'>,
  words: string[],
  limit: number,
  prefixes: string[] = [],
): string[] {
  const code = row.code;
  if (!code || (words.length === 0 && prefixes.length === 0) || limit <= 0) return [];
  const named: string[] = [];
  const worded: string[] = [];
  for (let start = 0, i = 0; start <= code.length && named.length < limit; i++) {
    if (words.length === 0 && worded.length >= limit) break;
    let end = code.indexOf('\n', start);
    if (end === -1) end = code.length;
    const line = code.slice(start, end);
    const lower = line.toLowerCase();
    if (words.some((w) => lower.includes(w))) named.push(snippet(row.start_line + i, line));
    else if (worded.length < limit && prefixes.some((p) => startsAWord(line, lower, p)))
      worded.push(snippet(row.start_line + i, line));
    start = end + 1;
  }
  return [...named, ...worded.slice(0, limit - named.length)];
}

const snippet = (lineNumber: number, line: string) => `  L${lineNumber}: ${line.trim().slice(0, SNIPPET_CHARS)}`;

const isAlnum = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isUpper = (c: number) => c >= 0x41 && c <= 0x5a;
const isLower = (c: number) => c >= 0x61 && c <= 0x7a;

/** Whether `prefix` (lower case) occurs in `line` (`lower` is its lower case) where a word starts. */
function startsAWord(line: string, lower: string, prefix: string): boolean {
  for (let at = lower.indexOf(prefix); at !== -1; at = lower.indexOf(prefix, at + 1)) {
    if (at === 0) return true;
    const before = line.charCodeAt(at - 1);
    if (!isAlnum(before)) return true;
    if (isUpper(line.charCodeAt(at)) && isLower(before)) return true;
  }
  return false;
}

/** The suffixes a plain word loses to find its other forms (`retries` → `retri`, `delayed` → `delay`). */
const SUFFIXES = ['ing', 'ies', 'ied', 'es', 'ed', 's'];
/** Shortest plain word of a task that picks snippet lines, and shortest stem it is cut to. */
const MIN_WORD = 4;

/**
 * The words of a task that pick snippet lines: `identifiers` — the lower-cased tokens that look like
 * identifiers (a capital after the first letter, `_`, `$`, `.`, `#`, a digit or `(`), with their parts
 * of at least 3 letters — match anywhere in a line, as before; `prefixes` — the other words of at
 * least MIN_WORD letters that are not stop words, stemmed — match where a word starts.
 */
export function snippetTerms(task: string): { identifiers: string[]; prefixes: string[] } {
  const identifiers = new Set<string>();
  const prefixes = new Set<string>();
  for (const token of task.split(/\s+/)) {
    if (!token) continue;
    if (looksLikeIdentifier(token)) {
      const lower = token.toLowerCase();
      const bare = trimNonWord(lower);
      if (bare.length >= 3) identifiers.add(bare);
      for (const part of identifierWords(token).split(' '))
        if (part.length >= 3 && !STOP_WORDS.has(part)) identifiers.add(part);
      continue;
    }
    for (const word of identifierWords(token).split(' '))
      if (word.length >= MIN_WORD && !STOP_WORDS.has(word)) for (const form of stems(word)) prefixes.add(form);
  }
  return { identifiers: [...identifiers], prefixes: [...prefixes].filter((p) => !identifiers.has(p)) };
}

function looksLikeIdentifier(token: string): boolean {
  const word = trimNonWord(token);
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if ((i > 0 && isUpper(c)) || c === 0x5f || c === 0x24 || c === 0x2e || c === 0x23 || c === 0x28) return true;
    if (c >= 0x30 && c <= 0x39) return true;
  }
  return false;
}

/** `word` without the punctuation around it (`"retries?"` → `retries`). */
function trimNonWord(word: string): string {
  let a = 0;
  let b = word.length;
  while (a < b && !isAlnum(word.charCodeAt(a)) && word[a] !== '_' && word[a] !== '$' && word[a] !== '#') a++;
  while (b > a && !isAlnum(word.charCodeAt(b - 1)) && word[b - 1] !== '_') b--;
  return word.slice(a, b);
}

/**
 * The word less one suffix (SUFFIXES), when at least MIN_WORD letters stay; `-ies`/`-ied` give
 * both the `i` and the `y` form (`retries` → `retri`, `retry`).
 */
function stems(word: string): string[] {
  for (const suffix of SUFFIXES) {
    if (!word.endsWith(suffix) || (suffix === 's' && word.endsWith('ss'))) continue;
    if (suffix === 'ies' || suffix === 'ied') {
      const root = word.slice(0, -3);
      if (root.length + 1 >= MIN_WORD) return [`${root}i`, `${root}y`];
      continue;
    }
    const keep = word.length - suffix.length;
    if (keep >= MIN_WORD) return [word.slice(0, keep)];
  }
  return [word];
}

/** A node's security note on one line, clipped. */
export function securityText(row: Pick<PacketNodeRow, 'security_summary'>): string {
  return collapsedPrefix(row.security_summary ?? '', SECURITY_CHARS);
}

export interface NodeTexts {
  micro: string | null;
  /** The NODES line's `meta:` segment (visibility, kind, signature, return type), or null. */
  meta: string | null;
  /** Lines of the code naming the task's words (at most the packet's per-file number). */
  snippets: string[];
  security: string;
}

/** Each node's packet text for one packet (its task's words, see snippetTerms), computed on first use and kept. */
export function nodeTexts(
  terms: { identifiers: string[]; prefixes: string[] },
  snippetsPerNode: number,
): (row: PacketNodeRow) => NodeTexts {
  const cache = new Map<PacketNodeRow, NodeTexts>();
  return (row) => {
    let texts = cache.get(row);
    if (!texts) {
      texts = {
        micro: microSummary(row),
        meta: metaOf(row),
        snippets: snippetLines(row, terms.identifiers, snippetsPerNode, terms.prefixes),
        security: securityText(row),
      };
      cache.set(row, texts);
    }
    return texts;
  };
}

function metaOf(row: PacketNodeRow): string | null {
  const meta = nodeMeta(row);
  return meta ? metaText(meta) : null;
}
