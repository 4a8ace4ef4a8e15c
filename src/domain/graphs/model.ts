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

/**
 * The far end of an edge as the tools show it: a node the commit does not hold is a GHOST
 * reference, named from its id (`path::Name` → `Name`).
 */
export function edgeEnd(row: {
  node_id: string;
  name: string | null;
  type: string | null;
  file_path: string | null;
  start_line: number | null;
}) {
  return {
    nodeId: row.node_id,
    name: row.name ?? row.node_id.split('::').pop() ?? row.node_id,
    type: row.type ?? 'GHOST',
    filePath: row.file_path ?? '',
    startLine: row.start_line ?? 0,
  };
}

/** How code search's semantic channel took part (issue 21): lexical alone says why. */
export const SemanticUseSchema = z
  .object({
    status: z
      .enum(['ok', 'pending', 'no-embedder', 'unavailable'])
      .describe(
        'ok: fused with the nodes nearest in meaning; pending: some nodes still wait for a vector; no-embedder / unavailable: lexical search alone',
      ),
    note: z.string().nullable().describe('why the semantic channel did not take part, or what it lacked'),
  })
  .describe('the semantic channel of the search');
