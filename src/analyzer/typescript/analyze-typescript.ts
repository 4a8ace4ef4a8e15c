import { join } from 'node:path';
import { fileNode } from '../file-node.js';
import type { GraphBuilder } from '../graph-builder.js';
import { isTestFile } from '../../file-kind.js';
import type { ProgressReporter } from '../progress.js';
import { JAVASCRIPT_EXTENSIONS } from '../source-files.js';
import type { TsContext, TsFile } from './context.js';
import { collectDeclarations } from './declarations.js';
import { fileDocComment } from './doc-comment.js';
import { createAnalysisProgram } from './program.js';
import { collectReferences } from './references.js';

const languageOf = (path: string) =>
  JAVASCRIPT_EXTENSIONS.some((e) => path.endsWith(e)) ? 'javascript' : 'typescript';

/**
 * Adds the graph of the repository's TypeScript and JavaScript files (`paths`: repo-relative) to
 * `graph`: one Program over all of them, declarations first (every file), then the references
 * the type checker resolves across files.
 */
export function analyzeTypeScript(
  root: string,
  paths: string[],
  graph: GraphBuilder,
  progress: ProgressReporter,
): void {
  if (paths.length === 0) return;
  const byFileName = new Map(paths.map((p) => [join(root, p), p]));
  const { program, resolveModule } = createAnalysisProgram(root, [...byFileName.keys()], (n) =>
    progress.step('parsing', n),
  );
  const ctx: TsContext = { checker: program.getTypeChecker(), graph, declarationIds: new Map(), owners: new Map() };

  const files: TsFile[] = [];
  for (const [fileName, path] of byFileName) {
    const sourceFile = program.getSourceFile(fileName);
    if (!sourceFile) continue;
    const isTest = isTestFile(path);
    const fileId = `file::${path}`;
    graph.addNode(fileNode(path, sourceFile.text, languageOf(path), isTest, fileDocComment(sourceFile)));
    files.push({ sourceFile, path, fileId, isTest });
  }
  for (const file of files) collectDeclarations(ctx, file);

  const fileIdOf = (fileName: string) => {
    const path = byFileName.get(fileName);
    return path === undefined ? undefined : `file::${path}`;
  };
  files.forEach((file, i) => {
    const testCases: string[] = [];
    collectReferences({ ctx, file, resolveModule, fileIdOf, testCases });
    if (file.isTest) graph.node(file.fileId)!.metadata.testCases = [...new Set(testCases)].slice(0, 500);
    progress.step('resolving', i + 1);
  });
}
