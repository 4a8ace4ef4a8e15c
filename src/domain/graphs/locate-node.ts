import { findSymbols } from '../../db/queries/graphs/find-symbols.js';
import { nodesNamed } from '../../db/queries/graphs/nodes-by-name.js';
import { AppError, notFound } from '../../errors.js';
import type { Context } from '../context.js';
import { symbolQuery } from './find-symbols.js';
import type { ResolvedGraph } from './resolve-graph.js';

/** Nodes a name locates: the answer and at most this many others it could mean. */
const MAX_NAMED = 10;
/** Closest symbols a miss suggests. */
const MAX_SUGGESTIONS = 5;

/**
 * The node a symbol name means when it is no node id (get_node's `node`, impact's `target`): a node
 * of exactly that name, any case, or a method of that name after its class (`retry` → `Ky.retry`),
 * best scored first, with the others of that name as `alternatives`. Nothing else is taken for it:
 * a name no node has is NOT_FOUND (see {@link unknownNode}), never the nearest search hit.
 */
export async function locateByName(
  ctx: Pick<Context, 'db'>,
  graph: ResolvedGraph,
  field: string,
  name: string,
): Promise<{ nodeId: string; alternatives: string[] }> {
  const [nodeId, ...alternatives] = await nodesNamed(ctx.db, graph, name, MAX_NAMED);
  if (nodeId === undefined) throw await unknownNode(ctx, graph, field, name);
  return { nodeId, alternatives };
}

/**
 * NOT_FOUND for a `field` naming no node, with the closest find_symbols hits as suggestions: in the
 * message ("not found; did you mean …") and as `details.suggestions` (node ids, best first), for a
 * caller to pick from, never taken as the answer.
 */
async function unknownNode(
  ctx: Pick<Context, 'db'>,
  graph: ResolvedGraph,
  field: string,
  wanted: string,
): Promise<AppError> {
  const hits = await findSymbols(ctx.db, graph, symbolQuery(wanted, MAX_SUGGESTIONS));
  return missing(graph, field, wanted, [...new Set(hits.map((h) => h.node_id))]);
}

/** The NOT_FOUND itself: `suggestions` are what the caller may have meant (node ids, or `<id>#<k>`). */
export function missing(graph: ResolvedGraph, field: string, wanted: string, suggestions: string[]): AppError {
  const where = `${graph.repo} @ ${graph.commitHash.slice(0, 10)}`;
  const hint = suggestions.length > 0 ? `did you mean ${suggestions.join(', ')}?` : 'find_symbols searches by words';
  return notFound(`${field}: no node "${wanted}" in ${where}: not found; ${hint}`, { [field]: wanted, suggestions });
}
