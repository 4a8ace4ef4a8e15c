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
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max).trimEnd()}${ellipsis}` : line;
}
