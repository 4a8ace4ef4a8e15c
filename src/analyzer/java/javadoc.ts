import type { Node as SyntaxNode } from 'web-tree-sitter';
import { isDocumentation, tidyDoc } from '../doc-text.js';

/**
 * The text of a Javadoc comment: `/**` and `*\/` off, each line's leading `*` (and one space after
 * it) off; block tags (`@param x …`, `@return …`) are kept as written. Plain loops, no regex: a
 * comment is attacker-sized.
 */
export function javadocText(comment: string): string {
  const body = comment.slice(3, comment.endsWith('*/') ? -2 : undefined);
  const lines = body.split('\n').map((line) => {
    let text = line.endsWith('\r') ? line.slice(0, -1) : line;
    text = text.trimStart();
    if (text.startsWith('*')) text = text.slice(text.startsWith('* ') ? 2 : 1);
    return text;
  });
  return tidyDoc(lines);
}

/**
 * The Javadoc of a declaration: the `/** … *\/` comment right before it (annotations are part of
 * the declaration, so the comment precedes them), if it is documentation rather than a licence.
 */
export function javadocOf(declaration: SyntaxNode): string | undefined {
  const previous = declaration.previousNamedSibling;
  if (previous?.type !== 'block_comment' || !previous.text.startsWith('/**') || previous.text === '/**/')
    return undefined;
  const text = javadocText(previous.text);
  return isDocumentation(text) ? text : undefined;
}
