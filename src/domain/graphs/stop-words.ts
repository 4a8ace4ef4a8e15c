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

/**
 * Words of a question that say what is asked, not what it is about (issue 21): never search terms,
 * so that "where does ky retry a failed request" looks for `retry failed request` and not for every
 * node whose code says "where" or "does". STOP_WORDS are in it too.
 */
export const QUESTION_WORDS: ReadonlySet<string> = new Set([
  ...STOP_WORDS,
  ...[
    'i me my we us you your they them their he she his her there here then than so if else also just',
    'about after before over under between through during without within upon via per all any each every',
    'some other such same more most much many few only own both either neither',
    'am be been being isn aren wasn weren doesn don didn hasn haven won wouldn shouldn couldn',
    'will would should could shall may might must need needs needed want wants',
    'whose whom whether while whenever wherever however',
    'happen happens happened happening work works worked working get gets got getting go goes done',
    'make makes made making take takes took put puts keep keeps kept',
    'find finds found look looks see show shows tell tells know mean means meant',
    'code codebase function functions method methods class classes module modules file files',
    'implement implements implemented implementation implementations defined define defines definition',
    'logic handle handles handled handling responsible part place thing things something someone',
    'call calls called calling caller callers invoke invokes invoked invoking',
    'change changes changed changing break breaks broke broken affect affects affected',
    'exactly actually really basically whole entire',
    'e g eg ie etc vs',
    'like one two three out back ask asks asked turn turns turned produce produces produced',
    'instead rather whatever whichever another stand stands figure figures plus once given',
    'decide decides decided deciding again still normally usually optional optionally',
    'pass passes passed passing end ends ended lets let happen supposed able',
  ]
    .join(' ')
    .split(' '),
]);
