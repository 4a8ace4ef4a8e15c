/**
 * Words of a query or a task too common to search by: find_symbols does not require them of a
 * strict match (they still score), resolve_context does not pick snippet lines by them.
 *
 * One list since issue 20: find_symbols and resolve_context each had their own (articles and
 * prepositions in one, question and auxiliary verbs in the other); a word common in one is common
 * in the other, so this is both together.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  [
    'a an the and or of to in on for with by is are was were be it its this that as at from into our not can',
    'how what which who why when where does do did has have use used uses',
  ]
    .join(' ')
    .split(' '),
);
