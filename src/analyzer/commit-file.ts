/**
 * The DevLens commit file the analyzer writes: `{commitHash, analyzedAt, nodes, edges, allNodes,
 * allEdges, nodeScores, stats}` (design.md §7; the shape `POST /api/v1/graphs` reads).
 */

/** Node types the analyzer emits (a subset of DevLens's). A type alias is an INTERFACE with `metadata.kind = 'type'`. */
export type NodeType =
  'FILE' | 'TEST' | 'FUNCTION' | 'CLASS' | 'METHOD' | 'INTERFACE' | 'ENUM' | 'COMPONENT' | 'HOOK' | 'ROUTE';

/** Edge types the analyzer emits. */
export type EdgeType = 'CALLS' | 'IMPORTS' | 'EXTENDS' | 'IMPLEMENTS' | 'TESTS' | 'HANDLES';

export interface GraphNode {
  /** `file::<path>` for files, `<path>::<name>` for symbols, `<path>::<Class>.<member>` for methods. */
  id: string;
  name: string;
  type: NodeType;
  /** Repo-relative, forward slashes. */
  filePath: string;
  /** 1-based, of the declaration (its first token, not its doc comment). */
  startLine: number;
  endLine: number;
  rawCode?: string;
  /** The declaration's own doc comment or docstring (`metadata.summarySource = 'doc-comment'`): never invented. */
  technicalSummary?: string;
  /** `file::<path>` of the file that declares the node. */
  parentFile: string;
  score?: number;
  metadata: Record<string, unknown>;
}

export interface GraphEdge {
  from: string;
  to: string;
  type: EdgeType;
  metadata?: Record<string, unknown>;
}

export interface CommitFile {
  commitHash: string;
  analyzedAt: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** DevLens repeats the arrays as allNodes / allEdges (before its filters); the analyzer filters nothing. */
  allNodes: GraphNode[];
  allEdges: GraphEdge[];
  nodeScores: Record<string, number>;
  stats: AnalysisStats;
}

export interface AnalysisStats {
  analyzer: string;
  hasGit: boolean;
  files: { total: number; typescript: number; javascript: number; python: number };
  totalNodesBeforeFilter: number;
  totalEdgesBeforeFilter: number;
  totalNodesAfterFilter: number;
  totalEdgesAfterFilter: number;
  nodeTypes: Record<string, number>;
  edgeTypes: Record<string, number>;
  /** Documented symbols (those with a technicalSummary from their own doc comment). */
  documentedNodes: number;
  averageNodeScore: number;
  topScoringNodes: Array<{ name: string; type: string; score: number }>;
  topScoringFiles: Array<{ name: string; filePath: string; score: number }>;
  /** Files that could not be read or parsed, with the reason. */
  skippedFiles: Array<{ filePath: string; reason: string }>;
  durationMs: number;
}
