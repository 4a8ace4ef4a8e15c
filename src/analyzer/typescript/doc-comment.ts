import ts from 'typescript';
import { isDocumentation, tidyDoc } from '../doc-text.js';

/** A block comment, or a run of `//` lines with no empty line between them. */
interface CommentGroup {
  pos: number;
  end: number;
  text: string;
}

/** The text of one comment without its delimiters and JSDoc's leading `*`s. */
function commentText(source: string, range: ts.CommentRange): string {
  const raw = source.slice(range.pos, range.end);
  if (range.kind === ts.SyntaxKind.SingleLineCommentTrivia) return raw.replace(/^\/\/\/?[ \t]?/, '');
  const lines = raw
    .replace(/^\/\*\*?/, '')
    .replace(/\*\/$/, '')
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, '').replace(/^\s*$/, ''));
  return tidyDoc(lines);
}

/**
 * Whether only blanks and at most one line break lie between two offsets (no empty line). The
 * second run of blanks belongs to the line break: `^[ \t]*(\r?\n)?[ \t]*$` tried every split of one
 * run of blanks between its two `[ \t]*` (quadratic) before failing.
 */
const adjacent = (source: string, from: number, to: number) => /^[ \t]*(?:\r?\n[ \t]*)?$/.test(source.slice(from, to));

function groups(source: string, ranges: readonly ts.CommentRange[]): CommentGroup[] {
  const out: Array<{ pos: number; end: number; parts: string[]; line: boolean }> = [];
  for (const range of ranges) {
    const line = range.kind === ts.SyntaxKind.SingleLineCommentTrivia;
    const last = out[out.length - 1];
    if (line && last?.line && adjacent(source, last.end, range.pos)) {
      last.parts.push(commentText(source, range));
      last.end = range.end;
    } else {
      out.push({ pos: range.pos, end: range.end, parts: [commentText(source, range)], line });
    }
  }
  return out.map((g) => ({ pos: g.pos, end: g.end, text: tidyDoc(g.parts) }));
}

/**
 * The comment right above `node` (no empty line between them): a `/** … *\/` or `/* … *\/` block,
 * or a run of `//` lines. Tool directives (eslint-disable, @ts-ignore…) between the two are looked
 * past; licence headers do not count. Returns the cleaned text, or undefined.
 */
export function leadingDocComment(node: ts.Node, sourceFile: ts.SourceFile): string | undefined {
  const source = sourceFile.text;
  const found = groups(source, ts.getLeadingCommentRanges(source, node.getFullStart()) ?? []);
  let end = node.getStart(sourceFile);
  for (let i = found.length - 1; i >= 0; i--) {
    const group = found[i]!;
    if (!adjacent(source, group.end, end)) return undefined;
    if (isDocumentation(group.text)) return group.text;
    end = group.pos;
  }
  return undefined;
}

/**
 * The file's own doc comment: its first documentation comment, unless that comment sits right
 * above the first statement (then it documents the statement).
 */
export function fileDocComment(sourceFile: ts.SourceFile): string | undefined {
  const source = sourceFile.text;
  const first = sourceFile.statements[0];
  const found = groups(source, ts.getLeadingCommentRanges(source, 0) ?? []);
  const candidate = found.find((g) => isDocumentation(g.text));
  if (!candidate) return undefined;
  const attached =
    first !== undefined &&
    candidate === found[found.length - 1] &&
    adjacent(source, candidate.end, first.getStart(sourceFile));
  return attached ? undefined : candidate.text;
}
