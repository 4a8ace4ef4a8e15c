import { codeSynonyms } from './code-synonyms.js';
import { identifierWords } from './search-document.js';
import { QUESTION_WORDS, STOP_WORDS } from './stop-words.js';

/** Most words of a query that are searched: the rest of a long paste adds cost, not precision. */
export const MAX_SEARCH_WORDS = 16;

/** Most words of a query read as a name written as words. */
const MAX_NAME_LIKE_TOKENS = 4;
/** Most words of a query that may spell a name (`refresh materialized view builder`). */
const MAX_SPELLED_TOKENS = 8;

/** What a code search looks for in a query (issue 21). */
export interface SearchTerms {
  /** The query as given, trimmed. */
  text: string;
  /**
   * The exact-name channel: tokens written as identifiers (`parseValueBinaryOperation`,
   * `Ky.retry`, `get_user`, `src/a.ts::f`), or the whole query when it is one token.
   */
  identifiers: string[];
  /** Search words: lower case, identifiers split into their parts, question words left out. */
  words: string[];
  /**
   * Words code may write for the search words (code-synonyms.ts: `list` → array, `time limit` →
   * timeout), each with the search word it stands for; searched at a lower weight.
   */
  synonyms: Array<{ word: string; of: string }>;
  /**
   * The whole query in lower case without spaces or punctuation, when it is short enough to be a
   * name written as words (`order by item builder` → orderbyitembuilder), else ''.
   */
  spelled: string;
  /** The query asks about a container itself ("which class…", "the file that…"), not one it mentions. */
  asksContainer: boolean;
  /** The node types the query names ("which class…" → CLASS), ranked up. */
  askedTypes: string[];
  /** The query asks who calls or uses something ("what calls…", "who uses…", "callers of…"). */
  asksCallers: boolean;
  /**
   * The query asks what a thing is ("what is the object that…", "what's the mechanism…"; resolve_context's
   * `concept` intent): a class or type answers as well as a function, so containers are not ranked down.
   */
  asksDefinition: boolean;
  /**
   * A few words and no question word ("conflict builder", "merge headers"): a name written as
   * words, looked up as such — a class or file is as good an answer as a function.
   */
  nameLike: boolean;
}

/** "what is the…", "what's a…", "what are the…". */
const DEFINITION_QUESTION = /^\s*what(?:'s|\s+is|\s+are)\s+(?:the|a|an)\b/i;

/** Words that open a caller question, and the verbs that make it one within CALLER_VERB_REACH words. */
const CALLER_ASKERS = new Set(['what', 'who', 'which']);
const CALLER_VERBS = new Set(['call', 'calls', 'use', 'uses', 'invoke', 'invokes', 'trigger', 'triggers', 'reaches']);
const CALLER_VERB_REACH = 4;
/** "callers of", "call sites", "called from/by", "used by", "invoked by". */
const CALLER_PHRASE = /\b(?:callers?|call sites?|called (?:from|by)|used by|invoked by)\b/i;

/**
 * "what calls", "who uses", "which code invokes" (a question word, then a calling verb within four
 * words), or a caller phrase. By words, not one regex: the regex with the words between
 * (`(?:\s+[\w-]+){0,3}?\s+`) backtracked polynomially on runs of short words (recheck found it).
 */
function asksCallers(text: string): boolean {
  const words = text.toLowerCase().split(/[^\w-]+/);
  for (let i = 0; i < words.length; i++) {
    if (!CALLER_ASKERS.has(words[i]!)) continue;
    for (let j = i + 1; j <= i + CALLER_VERB_REACH && j < words.length; j++)
      if (CALLER_VERBS.has(words[j]!)) return true;
  }
  return CALLER_PHRASE.test(text);
}

/** Words that name a kind of container, and the node types they mean. */
const CONTAINER_WORDS: Record<string, string[]> = {
  class: ['CLASS'],
  classes: ['CLASS'],
  file: ['FILE'],
  files: ['FILE'],
  module: ['MODULE', 'FILE'],
  modules: ['MODULE', 'FILE'],
  interface: ['INTERFACE'],
  interfaces: ['INTERFACE'],
};

/** Words that ask for the container word after them ("which class", "in what file"). */
const CONTAINER_ASKERS = new Set(['which', 'what']);
/** Words after "the class" that make it the thing asked for ("the class that holds…"). */
const CONTAINER_CLAUSE = new Set(['that', 'which', 'where', 'whose', 'holding', 'containing', 'responsible']);

/**
 * Whether the container word at `i` is what the question asks for ("which class holds…", "what
 * module…", "the file that…"), not a thing it mentions ("converted into exception classes",
 * "uploaded files", "migration files").
 */
function asksFor(words: string[], i: number): boolean {
  if (CONTAINER_ASKERS.has(words[i - 1] ?? '') || CONTAINER_ASKERS.has(words[i - 2] ?? '')) return true;
  return words[i - 1] === 'the' && CONTAINER_CLAUSE.has(words[i + 1] ?? '');
}

/** Whether a token is written as an identifier rather than as a word of prose. */
function looksLikeIdentifier(token: string): boolean {
  return (
    /[a-z0-9][A-Z]/.test(token) || // camelCase, fooBar, parseHTTP
    /[A-Za-z0-9]_[A-Za-z0-9]/.test(token) || // snake_case
    /[A-Za-z0-9_$]\.[A-Za-z_$]/.test(token) || // Ky.retry, module.fn
    token.includes('::') ||
    token.endsWith('()')
  );
}

/** A token without the punctuation prose puts around it: quotes, backticks, brackets, a full stop. */
function bare(token: string): string {
  let start = 0;
  let end = token.length;
  const edge = (c: string) => '"\'`«»“”‘’([{<,;:!?'.includes(c);
  while (start < end && edge(token[start]!)) start++;
  while (
    end > start &&
    (edge(token[end - 1]!) ||
      token[end - 1] === '.' ||
      token[end - 1] === ')' ||
      token[end - 1] === ']' ||
      token[end - 1] === '}' ||
      token[end - 1] === '>')
  )
    end--;
  let out = token.slice(start, end);
  if (token.slice(start).startsWith(`${out}()`)) out = `${out}()`;
  return out;
}

/**
 * The terms of a search query or question: its identifiers (the exact-name channel) and its search
 * words. Question words ("where", "does", "calls", "function") are never search terms; when a
 * query is nothing but such words, the words that are not plain stop words are searched instead,
 * so `find_symbols("handle")` still finds `handle`.
 */
export function searchTerms(query: string): SearchTerms {
  const text = query.trim();
  const tokens = text.split(/\s+/).filter(Boolean).map(bare).filter(Boolean);
  const identifiers: string[] = [];
  for (const token of tokens) {
    const name = token.endsWith('()') ? token.slice(0, -2) : token;
    if (name && (tokens.length === 1 || looksLikeIdentifier(token))) identifiers.push(name);
  }
  const all: string[] = [];
  const askedTypes = new Set<string>();
  const lowered = tokens.map((t) => t.toLowerCase());
  for (const [i, token] of tokens.entries()) {
    const lower = lowered[i]!;
    // Own keys only: `constructor` or `toString` in a question is a word, not Object.prototype's.
    if (Object.hasOwn(CONTAINER_WORDS, lower) && asksFor(lowered, i))
      for (const type of CONTAINER_WORDS[lower]!) askedTypes.add(type);
    // An identifier counts by its parts and as a whole (`MySQL` → mysql, my, sql); a word of prose
    // by its pieces between punctuation only (`SQLite` → sqlite, `Retry-After` → retry, after).
    const pieces = looksLikeIdentifier(token)
      ? [...lower.split(/[^a-z0-9]+/), ...identifierWords(token).split(' ')]
      : lower.split(/[^a-z0-9]+/);
    for (const part of pieces) if (part.length > 1 || /\d/.test(part)) all.push(part);
  }
  const distinct = [...new Set(all)];
  let words = distinct.filter((w) => !QUESTION_WORDS.has(w));
  const nameLike = tokens.length <= MAX_NAME_LIKE_TOKENS && words.length === distinct.length;
  if (words.length === 0) words = distinct.filter((w) => !STOP_WORDS.has(w));
  words = words.slice(0, MAX_SEARCH_WORDS);
  return {
    text,
    identifiers: [...new Set(identifiers)],
    words,
    // Not for a name written as words (`merge headers`): that asks for the name, not its meaning.
    synonyms: nameLike ? [] : codeSynonyms(all.slice(0, MAX_SEARCH_WORDS * 4), words),
    spelled: tokens.length <= MAX_SPELLED_TOKENS ? text.toLowerCase().replace(/[^a-z0-9]/g, '') : '',
    asksContainer: askedTypes.size > 0,
    askedTypes: [...askedTypes],
    asksCallers: asksCallers(text.slice(0, 2000)),
    asksDefinition: DEFINITION_QUESTION.test(text.slice(0, 200)),
    nameLike,
  };
}
