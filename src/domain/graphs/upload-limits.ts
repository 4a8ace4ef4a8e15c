import type { CommitFileLimits } from './commit-file-limits.js';

/**
 * What one upload may make the service hold, checked as the body is tokenised (see readCommitFile),
 * so that memory stays bounded for any file within GRAPH_UPLOAD_LIMIT. Real files are far inside:
 * theia's (25,279 nodes, 131 MB) nests 4 levels deep, its largest node is 273 KB and its other
 * top-level fields (commitHash, analyzedAt, stats) 2.2 KB.
 */
export const UPLOAD_LIMITS: CommitFileLimits = {
  /** Nesting of any value (metadata, unknown fields, stats); DevLens writes a few levels. */
  maxDepth: 64,
  /** One node or edge (rawCode included), or one nodeScores entry: its characters and its values (theia's most: 483). */
  maxElement: 16 * 2 ** 20,
  maxElementValues: 100_000,
  /** commitHash, analyzedAt, stats and the top-level fields we do not model (kept in the commit's `extra`), together. */
  maxFields: 2 ** 20,
  maxFieldValues: 100_000,
  /** Rows per insert, and at most about this much JSON and this many values in one (plus the element that passes them). */
  batchSize: 500,
  batchChars: 4 * 2 ** 20,
  batchValues: 100_000,
};
/** nodeScores may have at most this many entries per node of the file, plus NODE_SCORES_SLACK. */
export const NODE_SCORES_PER_NODE = 2;
export const NODE_SCORES_SLACK = 10_000;
/** A nodeScores that comes before the nodes is held until they are stored: at most this much (keys and values, in characters). */
export const MAX_EARLY_SCORES = 4 * 2 ** 20;
