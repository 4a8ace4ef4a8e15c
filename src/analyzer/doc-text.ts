/** Doc text longer than this is cut: a summary, not a manual. */
export const MAX_DOC_CHARS = 4000;
/** Code longer than this is cut (rawCode): enough to show a declaration, not a bundle. */
export const MAX_CODE_CHARS = 50_000;

/** Comments that steer tools rather than document code. */
const DIRECTIVE =
  /^\s*(eslint|prettier-ignore|@ts-|istanbul|c8 |tslint|jshint|global |#region|#endregion|noinspection|type: ignore|noqa|pylint|pragma)/i;
/** Licence headers document the file's terms, not the code below them. */
const LICENCE = /copyright|licen[cs]e|spdx-license/i;

/** Whether a cleaned comment is documentation (not a tool directive or licence header). */
export function isDocumentation(text: string): boolean {
  return text.trim() !== '' && !DIRECTIVE.test(text) && !LICENCE.test(text.slice(0, 300));
}

/** Trims lines, drops blank lines at both ends, keeps paragraphs, cuts at MAX_DOC_CHARS. */
export function tidyDoc(lines: string[]): string {
  const text = lines
    // trimEnd, not .replace(/\s+$/, ''): that regex backtracked over a run of blanks from each of them.
    .map((l) => l.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return text.length > MAX_DOC_CHARS ? `${text.slice(0, MAX_DOC_CHARS - 1)}…` : text;
}

/** `code` cut to MAX_CODE_CHARS; `truncated` says whether it was. */
export function clipCode(code: string): { rawCode: string; truncated: boolean } {
  return code.length > MAX_CODE_CHARS
    ? { rawCode: code.slice(0, MAX_CODE_CHARS), truncated: true }
    : { rawCode: code, truncated: false };
}
