/**
 * How a question's words may be spelled in code (issue 21): a developer asks about a "list", a
 * "time limit" or "escaping"; the code says `array`, `timeout`, `sanitize`. Each group below is a
 * set of words that name the same thing across code bases and languages (not one repository's
 * vocabulary); a question word of a group also searches for the others, at a lower weight
 * (lexical-search.ts SYNONYM_WEIGHT), so a node that uses the question's own word still ranks first.
 *
 * Keys are matched after a light inflection strip (`arrays`, `escaped`, `escaping` → their base),
 * and two-word phrases (`time limit`, `try again`) on the question's words in order.
 */

/** Words that stand for each other in code. */
const GROUPS: readonly string[][] = [
  ['list', 'array'],
  ['dict', 'dictionary', 'mapping'],
  ['error', 'exception'],
  ['escape', 'sanitize'],
  ['timeout', 'deadline'],
  ['total', 'overall'],
  ['cancel', 'abort'],
  ['lock', 'mutex'],
  ['walk', 'traverse', 'visit'],
  ['rewrite', 'transform'],
  ['combine', 'merge'],
  ['condition', 'filter', 'predicate'],
  ['remove', 'delete', 'drop'],
  ['hide', 'obfuscate', 'mask', 'redact'],
  ['secret', 'sensitive', 'credential'],
  ['store', 'save', 'persist'],
  ['length', 'size', 'len'],
  ['parameter', 'param', 'argument', 'arg'],
  ['config', 'configuration', 'settings'],
  ['initialize', 'init'],
  ['directory', 'folder', 'dir'],
  ['url', 'uri'],
  ['connection', 'conn'],
  ['database', 'db'],
  ['authentication', 'auth'],
  ['callback', 'handler', 'listener'],
  ['encode', 'serialize'],
  ['decode', 'deserialize'],
  ['wait', 'sleep', 'delay'],
  ['default', 'fallback'],
  ['check', 'validate', 'verify', 'assert'],
  ['copy', 'clone'],
  ['environment', 'env'],
  ['string', 'str'],
  ['number', 'num', 'integer', 'int'],
  ['boolean', 'bool'],
];

/** Words that also search for others, but not the other way round (`stop` is more than cancelling). */
const ONE_WAY: Record<string, string[]> = {
  stop: ['cancel', 'abort'],
  gate: ['lock', 'mutex'],
  capability: ['supports'],
  capabilities: ['supports'],
  split: ['parse'],
  convert: ['map', 'transform'],
  hidden: ['obfuscate', 'mask', 'redact'],
};

/** Two-word phrases and the words code writes for them. */
const PHRASES: Record<string, string[]> = {
  'time limit': ['timeout'],
  'try again': ['retry'],
  'tried again': ['retry'],
  'tries again': ['retry'],
  'sent again': ['retry'],
  'by hand': ['manual'],
};

const RELATED = new Map<string, string[]>();
for (const group of GROUPS)
  for (const word of group) RELATED.set(word, [...(RELATED.get(word) ?? []), ...group.filter((w) => w !== word)]);
for (const [word, others] of Object.entries(ONE_WAY)) RELATED.set(word, [...(RELATED.get(word) ?? []), ...others]);

/** The word and its bases without a plural or verb ending: `escaped` → escaped, escap, escape. */
function baseForms(word: string): string[] {
  const forms = [word];
  const strip = (suffix: string, add = '') => {
    if (word.length > suffix.length + 2 && word.endsWith(suffix)) forms.push(word.slice(0, -suffix.length) + add);
  };
  strip('ies', 'y');
  strip('es');
  strip('s');
  strip('ed');
  strip('ed', 'e');
  strip('d');
  strip('ing');
  strip('ing', 'e');
  return forms;
}

/**
 * The words code may write for a question's search words: for each, the search word it stands for
 * (`of`, a word of `words`; the related word itself when a phrase holds no search word) and the
 * related word. Phrases are read on `sequence`, the question's words in order before question words
 * were left out (`tried again`: `again` is not searched). Never a word of `words`, each one once.
 */
export function codeSynonyms(
  sequence: readonly string[],
  words: readonly string[],
): Array<{ word: string; of: string }> {
  const asked = new Set(words);
  const out: Array<{ word: string; of: string }> = [];
  const seen = new Set<string>();
  const push = (word: string, of: string) => {
    if (asked.has(word) || seen.has(word)) return;
    seen.add(word);
    out.push({ word, of });
  };
  for (let i = 0; i + 1 < sequence.length; i++) {
    const phrase = `${sequence[i]} ${sequence[i + 1]}`;
    if (!Object.hasOwn(PHRASES, phrase)) continue;
    const of = [sequence[i]!, sequence[i + 1]!].find((w) => asked.has(w));
    for (const related of PHRASES[phrase]!) push(related, of ?? related);
  }
  for (const word of words)
    for (const form of baseForms(word)) for (const related of RELATED.get(form) ?? []) push(related, word);
  return out;
}
