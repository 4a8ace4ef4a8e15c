import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GraphBuilder } from '../graph-builder.js';
import type { ProgressReporter } from '../progress.js';
import { treeSitterParser } from '../tree-sitter.js';
import { isTestFile } from '../../file-kind.js';
import { readJavaFile, type JavaFile } from './java-file.js';
import { JavaLinker } from './java-linker.js';

/** The first syntax error's line, 1-based, or undefined when the tree has none. */
function errorLine(root: import('web-tree-sitter').Node): number | undefined {
  if (!root.hasError) return undefined;
  // Iterative: a hostile file nests deep enough to overflow a recursive walk.
  const cursor = root.walk();
  try {
    for (;;) {
      const at = cursor.currentNode;
      if (at.isError || at.isMissing) return at.startPosition.row + 1;
      if (at.hasError && cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) return root.startPosition.row + 1;
    }
  } finally {
    cursor.delete();
  }
}

/**
 * Reads and parses the repository's Java files into JavaFile records (their nodes go into
 * `graph`); a file with a syntax error is skipped whole, with its line in `skipped`, rather than
 * read from tree-sitter's recovery.
 */
export async function readJavaFiles(
  root: string,
  paths: string[],
  graph: GraphBuilder,
  progress: ProgressReporter,
  skipped: Array<{ filePath: string; reason: string }>,
): Promise<JavaFile[]> {
  const parser = await treeSitterParser('java');
  const files: JavaFile[] = [];
  try {
    let done = 0;
    for (const path of paths) {
      const source = await readFile(join(root, path), 'utf8');
      const tree = parser.parse(source);
      if (!tree) {
        skipped.push({ filePath: path, reason: 'tree-sitter could not parse it' });
        continue;
      }
      try {
        const line = errorLine(tree.rootNode);
        if (line !== undefined) skipped.push({ filePath: path, reason: `Java syntax error at line ${line}` });
        else {
          // Into a graph of its own first: a file given up half-way leaves no node behind.
          const own = new GraphBuilder();
          files.push(readJavaFile(tree, source, path, isTestFile(path), own));
          for (const node of own.build().nodes) graph.addNode(node);
        }
      } catch (error) {
        // A RangeError from nesting deeper than the stack: the file is skipped, the analysis goes on.
        if (!(error instanceof RangeError)) throw error;
        skipped.push({ filePath: path, reason: 'nested too deeply to read' });
      } finally {
        tree.delete();
      }
      progress.step('parsing', ++done);
    }
  } finally {
    parser.delete();
  }
  return files;
}

/**
 * Adds the graph of the repository's Java files to `graph`: tree-sitter parses each file (types,
 * methods, constructors, imports, call sites), then names are resolved by package: IMPORTS to the
 * files of the repository's types a file imports or uses from its package, EXTENDS/IMPLEMENTS as
 * declared, and CALLS by name within a type and its supertypes (`m()`, `this.m()`, `super.m()`),
 * to a type's method (`C.m()`, static imports), to a constructor (`new C()`, `super(…)`) and on a
 * field, parameter or local whose declared type is the repository's.
 */
export async function analyzeJava(
  root: string,
  paths: string[],
  graph: GraphBuilder,
  progress: ProgressReporter,
  skipped: Array<{ filePath: string; reason: string }>,
): Promise<void> {
  if (paths.length === 0) return;
  const files = await readJavaFiles(root, paths, graph, progress, skipped);
  const linker = new JavaLinker(files, graph);
  let done = 0;
  for (const file of files) {
    linker.linkImports(file);
    for (const type of file.allTypes) linker.linkHierarchy(type);
    for (const call of file.calls) {
      const id = linker.callee(file, call);
      if (id)
        graph.addEdge(call.owner, id, 'CALLS', {
          calledName: call.receiver ? `${call.receiver}.${call.name}` : call.name,
        });
    }
    if (file.isTest) linker.linkTests(file);
    progress.step('resolving', ++done);
  }
}
