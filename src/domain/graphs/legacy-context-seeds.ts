import { fileNodes, nodesByIds } from '../../db/queries/graphs/node-reads.js';
import { findSymbols } from '../../db/queries/graphs/find-symbols.js';
import { nodesByName } from '../../db/queries/graphs/nodes-by-name.js';
import type { Context } from '../context.js';
import { symbolQuery } from './find-symbols.js';

const LEXICAL_HITS = 15;
const LEXICAL_SEEDS = 3;
import { MAX_FOCUS } from './context-seeds.js';

/**
 * resolve_context's seeds before issue 21 (`DEVLENS_PACKET_RANKER=legacy`, for diagnosis): the focus (node ids, symbol names, file paths — a name gives its first
 * 3 nodes, a file its file nodes), then the best lexical hits of the task, without repeats.
 * `lexical` is the whole lexical ranking (LEXICAL_HITS), `search` the query it ran.
 */
export async function legacyContextSeeds(
  ctx: Pick<Context, 'db'>,
  g: { graphId: string; commitHash: string },
  task: string,
  focus: string[],
) {
  const focusIds: string[] = [];
  for (const f of focus.slice(0, MAX_FOCUS)) {
    const direct = await nodesByIds(ctx.db, g, [f]);
    if (direct.length) focusIds.push(f);
    else {
      const files = await fileNodes(ctx.db, g, [f.replace(/^\.?\//, '')]);
      if (files.length) focusIds.push(...files);
      else focusIds.push(...(await nodesByName(ctx.db, g, f)).slice(0, 3).map((r) => r.node_id));
    }
  }
  const search = symbolQuery(task, LEXICAL_HITS);
  const lexical = await findSymbols(ctx.db, g, search);
  const seeds = [...new Set([...focusIds, ...lexical.slice(0, LEXICAL_SEEDS).map((h) => h.node_id)])];
  return { focusIds, lexical, seeds, search };
}
