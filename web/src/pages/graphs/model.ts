import { href } from '../../route';
import type { ApiError, Json } from '../../api';

export type Repo = Json<'/api/v1/graphs', 'get'>['graphs'][number];
export type Symbols = Json<'/api/v1/symbols', 'get'>;
export type NodeDetail = Json<'/api/v1/nodes/{nodeId}', 'get'>;
export type Neighbour = NodeDetail['callers'] extends (infer T)[] | undefined ? T : never;
export type Impact = Json<'/api/v1/tools/impact', 'post'>;
export type Packet = Json<'/api/v1/context', 'post'>;

/**
 * The Code graphs page's own routes (after `#/graphs`); the graph id travels with every node so that a
 * node page works with several repositories uploaded (node ids are only unique within one graph).
 */
export const graphsHref = {
  list: () => href('graphs'),
  repo: (graphId: string, query?: string) =>
    query ? href('graphs', 'repo', graphId, query) : href('graphs', 'repo', graphId),
  node: (graphId: string, nodeId: string) => href('graphs', 'node', graphId, nodeId),
};

/** A node the commit does not hold (an unresolved import or call): there is no page to link to. */
export const isGhost = (n: { type: string }) => n.type === 'GHOST';

/** `file:line`, as DevLens prints locations. */
export const where = (n: { filePath: string; startLine: number }) => `${n.filePath}:${n.startLine}`;

/** A score for reading: two decimals at most, trailing zeros dropped (7.300000000000001 → 7.3, 6.325 → 6.33, 2 → 2). */
export const formatScore = (score: number) => String(Math.round(score * 100) / 100);

/**
 * What get_node suggests instead of a node id or name the graph does not have (NOT_FOUND with
 * `details.suggestions`, node ids best first; maybe none), or null for any other error.
 */
export function suggestionsOf(error: ApiError | null): string[] | null {
  if (error?.code !== 'NOT_FOUND') return null;
  const suggestions = (error.details as { suggestions?: unknown } | null | undefined)?.suggestions;
  return Array.isArray(suggestions) ? suggestions.filter((s): s is string => typeof s === 'string') : null;
}
