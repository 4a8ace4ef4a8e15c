import { z } from 'zod';

/** Where a node is: the fields every DevLens answer names a node by. */
export const NodeLocationSchema = z.object({
  nodeId: z.string(),
  name: z.string(),
  type: z.string(),
  filePath: z.string(),
  startLine: z.number().int(),
  endLine: z.number().int(),
});

export const SymbolHitSchema = NodeLocationSchema.extend({
  relevance: z.number().describe('1 for exact matches; otherwise relative to the best ranked (0-1]'),
  exactMatch: z.boolean(),
});
export type SymbolHit = z.output<typeof SymbolHitSchema>;

/** A node at the other end of an edge. */
export const NodeRefSchema = NodeLocationSchema.omit({ endLine: true }).extend({
  type: z.string().describe('GHOST when the commit does not hold the node'),
  edgeType: z.string(),
});
export type NodeRef = z.output<typeof NodeRefSchema>;

/** Which upload an answer comes from, so that a stale answer is visible. */
export const ProvenanceSchema = z.object({
  source: z.enum(['commit']),
  graphId: z.string(),
  repo: z.string(),
  commitHash: z.string(),
  analyzedAt: z.string(),
  uploadedAt: z.string(),
  hasGit: z.boolean(),
});
export type Provenance = z.output<typeof ProvenanceSchema>;
