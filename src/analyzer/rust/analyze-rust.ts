import type { GraphBuilder } from '../graph-builder.js';
import type { ProgressReporter } from '../progress.js';

/**
 * Adds the graph of the repository's Rust files to `graph` (issue 25): not written yet, so
 * Rust files are listed and counted but give no nodes.
 */
export async function analyzeRust(
  _root: string,
  paths: string[],
  _graph: GraphBuilder,
  _progress: ProgressReporter,
  _skipped: Array<{ filePath: string; reason: string }>,
): Promise<void> {
  if (paths.length === 0) return;
}
