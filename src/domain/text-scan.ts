/**
 * Character classes of JavaScript regular expressions, for scanners that replace a regex which
 * backtracked on hostile text (issue 19) and must match exactly what it matched.
 */

/** Whether a UTF-16 unit is a line terminator: what regex `.` does not match, and where `^`/`$` of a `m` regex match. */
export function isLineTerminator(c: number): boolean {
  return c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;
}

/** Whether a UTF-16 unit is matched by regex `\s` (and removed by `String.prototype.trim`): white space and line terminators. */
export function isJsSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * The first `max` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair: a
 * lone surrogate has no UTF-8 form, and Postgres refuses it in JSON (22P02) or text.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/**
 * `text` without the characters of `leading` at its start and of `trailing` at its end, in one pass
 * each (a regex like /\/+$/ backtracks on a long run that does not end the text).
 * @example trimChars('./a.ts!', './', '!') === 'a.ts'
 */
export function trimChars(text: string, leading: string, trailing: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && leading.includes(text[start]!)) start++;
  while (end > start && trailing.includes(text[end - 1]!)) end--;
  return text.slice(start, end);
}
