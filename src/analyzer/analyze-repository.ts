import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { VERSION } from '../version.js';
import { contentHash, gitHead } from './commit-hash.js';
import type { AnalysisStats, CommitFile, GraphEdge, GraphNode } from '../commit-file.js';
import { GraphBuilder } from './graph-builder.js';
import { scoreNodes } from './node-scores.js';
import { progressFor, type AnalysisProgress } from './progress.js';
import { analyzeGo } from './go/analyze-go.js';
import { analyzeJava } from './java/analyze-java.js';
import { analyzePython } from './python/analyze-python.js';
import { analyzeRust } from './rust/analyze-rust.js';
import {
  GO_EXTENSIONS,
  JAVA_EXTENSIONS,
  JAVASCRIPT_EXTENSIONS,
  listSourceFiles,
  PYTHON_EXTENSIONS,
  RUST_EXTENSIONS,
  TYPESCRIPT_EXTENSIONS,
} from './source-files.js';
import { analyzeTypeScript } from './typescript/analyze-typescript.js';

export interface AnalyzeOptions {
  /** gitignore-style patterns: when given, only matching files are analyzed. */
  include?: string[];
  /** gitignore-style patterns of files or folders to leave out. */
  exclude?: string[];
  /** Called as files are listed, parsed and resolved (often: throttle what you print). */
  onProgress?: (progress: AnalysisProgress) => void;
  /** The analysis time written as analyzedAt (default: now). */
  now?: () => Date;
}

export class AnalyzeError extends Error {
  override readonly name = 'AnalyzeError';
}

const hasExtension = (extensions: string[]) => (path: string) => extensions.some((e) => path.endsWith(e));

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

function statsOf(
  nodes: GraphNode[],
  edges: GraphEdge[],
  base: Pick<AnalysisStats, 'hasGit' | 'files' | 'skippedFiles' | 'durationMs'>,
): AnalysisStats {
  const round = (n: number) => Math.round(n * 100) / 100;
  const byScore = [...nodes].sort((a, b) => (b.score ?? 0) - (a.score ?? 0));
  const files = byScore.filter((n) => n.type === 'FILE' || n.type === 'TEST');
  return {
    analyzer: `devstream-hub ${VERSION}`,
    ...base,
    totalNodesBeforeFilter: nodes.length,
    totalEdgesBeforeFilter: edges.length,
    totalNodesAfterFilter: nodes.length,
    totalEdgesAfterFilter: edges.length,
    nodeTypes: countBy(nodes, (n) => n.type),
    edgeTypes: countBy(edges, (e) => e.type),
    documentedNodes: nodes.filter((n) => n.technicalSummary).length,
    averageNodeScore: nodes.length ? round(nodes.reduce((s, n) => s + (n.score ?? 0), 0) / nodes.length) : 0,
    topScoringNodes: byScore
      .filter((n) => n.type !== 'FILE' && n.type !== 'TEST')
      .slice(0, 10)
      .map((n) => ({ name: n.name, type: n.type, score: n.score ?? 0 })),
    topScoringFiles: files.slice(0, 10).map((n) => ({ name: n.name, filePath: n.filePath, score: n.score ?? 0 })),
  };
}

/**
 * Builds the DevLens commit file of the repository at `root` (TypeScript, JavaScript, Python, Go, Rust and Java
 * sources), without an LLM: structure from the TypeScript compiler and tree-sitter, summaries
 * only from the code's own doc comments and docstrings. commitHash is git's HEAD, or a hash of
 * the analyzed files' contents outside git. Throws AnalyzeError when `root` is not a folder.
 *
 * @example
 * const commit = await analyzeRepository('/srv/checkouts/shop', { exclude: ['fixtures/'] });
 * // commit.nodes: [{ id: 'file::src/app.ts', type: 'FILE', … }, { id: 'src/app.ts::buildApp', type: 'FUNCTION', … }]
 */
export async function analyzeRepository(root: string, options: AnalyzeOptions = {}): Promise<CommitFile> {
  const started = performance.now();
  const folder = resolve(root);
  const info = await stat(folder).catch(() => null);
  if (!info?.isDirectory()) throw new AnalyzeError(`${root} is not a folder`);

  options.onProgress?.({ phase: 'listing', filesDone: 0, filesTotal: 0, elapsedMs: 0 });
  const listed = await listSourceFiles(folder, options);
  const scripts = listed.files.filter(hasExtension([...TYPESCRIPT_EXTENSIONS, ...JAVASCRIPT_EXTENSIONS]));
  const python = listed.files.filter(hasExtension(PYTHON_EXTENSIONS));
  const go = listed.files.filter(hasExtension(GO_EXTENSIONS));
  const rust = listed.files.filter(hasExtension(RUST_EXTENSIONS));
  const java = listed.files.filter(hasExtension(JAVA_EXTENSIONS));
  const total = scripts.length + python.length + go.length + rust.length + java.length;
  const skippedFiles = listed.oversized.map((filePath) => ({ filePath, reason: 'larger than 1 MiB' }));

  const graph = new GraphBuilder();
  analyzeTypeScript(folder, scripts, graph, progressFor(options.onProgress, started, total, 0));
  await analyzePython(
    folder,
    python,
    graph,
    progressFor(options.onProgress, started, total, scripts.length),
    skippedFiles,
  );
  // Each language's files after the ones before it, for the progress count.
  let before = scripts.length + python.length;
  for (const [analyze, files] of [
    [analyzeGo, go],
    [analyzeRust, rust],
    [analyzeJava, java],
  ] as const) {
    await analyze(folder, files, graph, progressFor(options.onProgress, started, total, before), skippedFiles);
    before += files.length;
  }

  const { nodes, edges } = graph.build();
  const nodeScores = scoreNodes(nodes, edges);
  const commitHash = (listed.hasGit ? await gitHead(folder) : null) ?? (await contentHash(folder, listed.files));
  const durationMs = Math.round(performance.now() - started);
  const stats = statsOf(nodes, edges, {
    hasGit: listed.hasGit,
    files: {
      total,
      typescript: scripts.filter(hasExtension(TYPESCRIPT_EXTENSIONS)).length,
      javascript: scripts.filter(hasExtension(JAVASCRIPT_EXTENSIONS)).length,
      python: python.length,
      go: go.length,
      rust: rust.length,
      java: java.length,
    },
    skippedFiles,
    durationMs,
  });
  options.onProgress?.({ phase: 'done', filesDone: total, filesTotal: total, elapsedMs: durationMs });
  return {
    commitHash,
    analyzedAt: (options.now?.() ?? new Date()).toISOString(),
    nodes,
    edges,
    allNodes: nodes,
    allEdges: edges,
    nodeScores,
    stats,
  };
}
