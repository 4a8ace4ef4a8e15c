/**
 * A text block's one-line preview of a long text (structuredContent carries it whole): whitespace
 * runs, newlines included, become one space, so that the preview never breaks the block's layout
 * (a task list's indented lines); past `max` characters it is cut, trailing blanks dropped, and
 * `ellipsis` marks the cut. DevStream's memory texts use `...` (spec: devstream-mcp-tools.md,
 * "Content Preview"); the default is `…`.
 *
 * @example preview('a  long\ntext', 6) === 'a long…'
 */
export function preview(text: string, max: number, ellipsis = '…'): string {
  // Only as much of the text as the preview needs is read (a memory may hold a megabyte): collapsed,
  // a window is a prefix of the whole text collapsed, so once it holds more than max + 1 characters
  // (its last may be a space the rest would trim) the preview is decided.
  for (let end = Math.min(text.length, 4 * max + 64); ; end = Math.min(text.length, 2 * end)) {
    const line = text.slice(0, end).replace(/\s+/g, ' ').trimStart();
    if (end === text.length) {
      const whole = line.trimEnd();
      return whole.length > max ? `${whole.slice(0, max).trimEnd()}${ellipsis}` : whole;
    }
    if (line.length > max + 1) return `${line.slice(0, max).trimEnd()}${ellipsis}`;
  }
}
