import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isTestFile } from '../../file-kind.js';
import type { GraphBuilder } from '../graph-builder.js';
import type { ProgressReporter } from '../progress.js';
import { treeSitterParser } from '../tree-sitter.js';
import { libraryCrates } from './cargo-crates.js';
import { firstSyntaxError, readRustFile, type RsFile } from './rust-file.js';
import { RustLinker } from './rust-linker.js';

const READ_AHEAD = 8;

/**
 * Adds the graph of the repository's Rust files to `graph`: tree-sitter parses each file (items,
 * `mod`/`use` declarations, call sites; a file with a syntax error is skipped, with its line, as
 * error recovery would give its items wrong extents), then the module tree is built from `mod x;`
 * declarations and calls are resolved by name: in the module, through `use` paths (`crate::`,
 * `self::`, `super::`, aliases, globs, and the repository's other crates by
 * their Cargo.toml names), `Type::f()`, `Self::f()` and `self.m()` over impl blocks and
 * traits; a method call on a receiver of unknown type only when one method in the repository has
 * that name.
 */
export async function analyzeRust(
  root: string,
  paths: string[],
  graph: GraphBuilder,
  progress: ProgressReporter,
  skipped: Array<{ filePath: string; reason: string }>,
): Promise<void> {
  if (paths.length === 0) return;
  const parser = await treeSitterParser('rust');
  const files: RsFile[] = [];
  try {
    let done = 0;
    // Reads run READ_AHEAD files ahead of the parser: waiting on each read in turn left the
    // parser idle a quarter of the time on 2,000 small files.
    const reads: Array<Promise<string>> = [];
    const readAt = (i: number) => {
      if (i >= paths.length) return;
      reads[i] = readFile(join(root, paths[i]!), 'utf8');
      reads[i].catch(() => {}); // awaited in its turn; not an unhandled rejection before then
    };
    for (let i = 0; i < READ_AHEAD; i++) readAt(i);
    for (const [i, path] of paths.entries()) {
      const source = await reads[i]!;
      delete reads[i];
      readAt(i + READ_AHEAD);
      const tree = parser.parse(source);
      if (tree) {
        try {
          const error = firstSyntaxError(tree);
          if (error)
            skipped.push({ filePath: path, reason: `syntax error at line ${error.line}, column ${error.column}` });
          else files.push(readRustFile(tree, source, path, isTestFile(path), graph));
        } finally {
          tree.delete();
        }
      } else skipped.push({ filePath: path, reason: 'tree-sitter could not parse it' });
      progress.step('parsing', ++done);
    }
  } finally {
    parser.delete();
  }

  const linker = new RustLinker(files, graph, await libraryCrates(root, paths));
  linker.linkModules();
  linker.linkImpls();
  let done = 0;
  for (const file of files) {
    linker.linkUses(file);
    for (const call of file.calls) {
      const id = linker.callee(call);
      if (id) graph.addEdge(call.owner, id, 'CALLS', { calledName: call.segments.join('::') });
    }
    progress.step('resolving', ++done);
  }
}
