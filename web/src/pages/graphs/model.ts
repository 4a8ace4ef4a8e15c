import { href } from '../../route';
import type { Json } from '../../api';

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
  repo: (graphId: string, query?: string) => (query ? href('graphs', 'repo', graphId, query) : href('graphs', 'repo', graphId)),
  node: (graphId: string, nodeId: string) => href('graphs', 'node', graphId, nodeId),
};

/** A node the commit does not hold (an unresolved import or call): there is no page to link to. */
export const isGhost = (n: { type: string }) => n.type === 'GHOST';

/** `file:line`, as DevLens prints locations. */
export const where = (n: { filePath: string; startLine: number }) => `${n.filePath}:${n.startLine}`;
