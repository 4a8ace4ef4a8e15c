import type { GraphNode } from '../commit-file.js';

/** Lines of a text as an editor numbers them: a final line break does not start another line. */
export function lineCount(text: string): number {
  if (text === '') return 1;
  let lines = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lines++;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/** The node of one source file: `file::<path>`, TEST for test files, its own doc comment as summary. */
export function fileNode(
  path: string,
  text: string,
  language: string,
  isTest: boolean,
  doc: string | undefined,
): GraphNode {
  const id = `file::${path}`;
  return {
    id,
    name: path.split('/').pop()!,
    type: isTest ? 'TEST' : 'FILE',
    filePath: path,
    startLine: 1,
    endLine: lineCount(text),
    parentFile: id,
    ...(doc ? { technicalSummary: doc } : {}),
    metadata: { language, ...(doc ? { summarySource: 'doc-comment' } : {}) },
  };
}
