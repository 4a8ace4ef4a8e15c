/**
 * The text a `resolve_context` packet shows of each node — its one-line meaning, the lines of its
 * code that name the task's words, its security note — read from stored, uploaded text. Each is
 * read only as far as it is shown (issue 19: a summary of 60,000 `<` cost 7 s per packet through
 * a backtracking regex), and computed once per node however often the packet is re-rendered
 * while it is fitted to its budget.
 */
import type { PacketNodeRow } from '../../db/queries/graphs/node-reads.js';
import { isJsSpace } from '../text-scan.js';

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

/** Up to `limit` lines of a node's code that name a word of the task, with their line numbers; reads the code only until they are found. */
export function snippetLines(
  row: Pick<PacketNodeRow, 'code' | 'start_line'>,
  words: string[],
  limit: number,
): string[] {
  const code = row.code;
  if (!code || words.length === 0) return [];
  const found: string[] = [];
  for (let start = 0, i = 0; start <= code.length && found.length < limit; i++) {
    let end = code.indexOf('\n', start);
    if (end === -1) end = code.length;
    const line = code.slice(start, end);
    const lower = line.toLowerCase();
    if (words.some((w) => lower.includes(w)))
      found.push(`  L${row.start_line + i}: ${line.trim().slice(0, SNIPPET_CHARS)}`);
    start = end + 1;
  }
  return found;
}

/** A node's security note on one line, clipped. */
export function securityText(row: Pick<PacketNodeRow, 'security_summary'>): string {
  return collapsedPrefix(row.security_summary ?? '', SECURITY_CHARS);
}

export interface NodeTexts {
  micro: string | null;
  /** Lines of the code naming the task's words (at most the packet's per-file number). */
  snippets: string[];
  security: string;
}

/** Each node's packet text for one packet (its task's `words`), computed on first use and kept. */
export function nodeTexts(words: string[], snippetsPerNode: number): (row: PacketNodeRow) => NodeTexts {
  const cache = new Map<PacketNodeRow, NodeTexts>();
  return (row) => {
    let texts = cache.get(row);
    if (!texts) {
      texts = {
        micro: microSummary(row),
        snippets: snippetLines(row, words, snippetsPerNode),
        security: securityText(row),
      };
      cache.set(row, texts);
    }
    return texts;
  };
}
