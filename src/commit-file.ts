import { z } from 'zod';

/**
 * The DevLens commit file: one analysed commit of a repo's code graph (design.md §7). The one
 * home of its format — read by the analyzer's writer (analyzer/commit-file-json.ts), the upload's
 * reader (commit-file-reader.ts, upload-graph.ts) and the OpenAPI entry of `POST /api/v1/graphs`.
 *
 * The upload accepts more than the analyzer writes: any node and edge type, and every extra field
 * (kept, not rejected). The interfaces below are what the analyzer writes; `CommitFileSchema` is
 * what the upload reads (a compile-time check below keeps the first inside the second; they are type aliases, not
 * interfaces, for that: an interface has no index signature to match a loose object's).
 */

/** How the format is named in documentation and help texts. */
export const COMMIT_FILE_SHAPE = '{commitHash, analyzedAt, nodes, edges, allNodes?, allEdges?, nodeScores?, stats?}';

/**
 * The big arrays, streamed element by element, in the order the analyzer writes them. DevLens
 * repeats `nodes` / `edges` as `allNodes` / `allEdges` (before its filters): the upload reads those
 * only when `nodes` / `edges` are missing.
 */
export const ELEMENT_ARRAYS = ['nodes', 'edges', 'allNodes', 'allEdges'] as const;
export type ElementArray = (typeof ELEMENT_ARRAYS)[number];

/** Whether an element array holds nodes (else edges). */
export const holdsNodes = (array: ElementArray): boolean => array === 'nodes' || array === 'allNodes';

/** Top-level objects streamed entry by entry (a score per node: as many entries as nodes). */
export const ENTRY_OBJECTS = ['nodeScores'] as const;

/** Top-level fields read for themselves besides the arrays; the upload keeps any other in the commit's `extra`. */
export const FILE_FIELDS = ['commitHash', 'analyzedAt', 'stats', 'nodeScores'] as const;

export const GraphNodeSchema = z.looseObject({
  id: z.string().describe('`path::Name`, or `file::path` for a file; may repeat (overloads)'),
  name: z.string().optional(),
  type: z.string().describe('FUNCTION, CLASS, METHOD, FILE, GHOST… (unknown types are kept)'),
  filePath: z.string().optional(),
  startLine: z.number().int().min(0).optional(),
  endLine: z.number().int().min(0).optional(),
  rawCode: z.string().optional(),
  technicalSummary: z.string().optional(),
  businessSummary: z.string().optional(),
  security: z.looseObject({ severity: z.string().optional(), summary: z.string().optional() }).optional(),
  score: z.number().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export const GraphEdgeSchema = z.looseObject({
  from: z.string(),
  to: z.string().describe('May name a node the file does not hold (a GHOST reference)'),
  type: z.string().describe('CALLS, IMPORTS, EXTENDS… (unknown types are kept)'),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** Node fields the upload keeps in columns; every other field of a node is kept in its `extra`. */
export const NODE_COLUMNS: ReadonlySet<string> = new Set(Object.keys(GraphNodeSchema.shape));
/** Edge fields kept in columns; the edge's `metadata` and any other field are merged into its metadata. */
export const EDGE_COLUMNS: ReadonlySet<string> = new Set(['from', 'to', 'type']);

/** For documentation only: the upload reads the body as a stream and validates it as it goes (upload-graph.ts). */
export const CommitFileSchema = z
  .looseObject({
    commitHash: z.string().optional().describe('Required unless ?commit= is given; must come before nodes'),
    analyzedAt: z.string().optional(),
    nodes: z.array(GraphNodeSchema).min(1),
    edges: z.array(GraphEdgeSchema).optional(),
    allNodes: z.array(GraphNodeSchema).optional().describe('Read only when nodes is missing'),
    allEdges: z.array(GraphEdgeSchema).optional().describe('Read only when edges is missing'),
    nodeScores: z.record(z.string(), z.number()).optional(),
    stats: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'CommitFile' });

/** Node types the analyzer emits (a subset of DevLens's). A type alias is an INTERFACE with `metadata.kind = 'type'`. */
export type NodeType =
  | 'FILE'
  | 'TEST'
  | 'FUNCTION'
  | 'CLASS'
  | 'METHOD'
  | 'INTERFACE'
  | 'ENUM'
  | 'COMPONENT'
  | 'HOOK'
  | 'ROUTE'
  // Go, Rust and Java, as DevLens names them.
  | 'STRUCT'
  | 'TRAIT'
  | 'IMPL_BLOCK'
  | 'PACKAGE'
  | 'MODULE';

/** Edge types the analyzer emits. */
export type EdgeType = 'CALLS' | 'IMPORTS' | 'EXTENDS' | 'IMPLEMENTS' | 'TESTS' | 'HANDLES';

/** A node as the analyzer writes it. */
export type GraphNode = {
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
};

/** An edge as the analyzer writes it. */
export type GraphEdge = {
  from: string;
  to: string;
  type: EdgeType;
  metadata?: Record<string, unknown>;
};

/** A commit file as the analyzer writes it: every field, the arrays twice (it filters nothing). */
export type CommitFile = {
  commitHash: string;
  analyzedAt: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  allNodes: GraphNode[];
  allEdges: GraphEdge[];
  nodeScores: Record<string, number>;
  stats: AnalysisStats;
};

/** The analyzer's `stats`: the upload stores it as given. */
export type AnalysisStats = {
  analyzer: string;
  hasGit: boolean;
  files: {
    total: number;
    typescript: number;
    javascript: number;
    python: number;
    go: number;
    rust: number;
    java: number;
  };
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
};

/** Compile-time check: what the analyzer writes is a file the upload reads (type-checking fails otherwise). */
type Fits<T extends Reads, Reads> = T;
export type AnalyzerFileFitsUpload = Fits<CommitFile, z.input<typeof CommitFileSchema>>;
