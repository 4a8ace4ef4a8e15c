import { fileNodes, nodesByIds } from '../../db/queries/graphs/node-reads.js';
import { nodesNamed } from '../../db/queries/graphs/nodes-by-name.js';
import type { Context } from '../context.js';
import type { Intent } from './intents.js';
import type { LexicalHit } from './lexical-search.js';
import { searchNodes, type SemanticUse } from './node-search.js';
import { searchTerms, type SearchTerms } from './search-terms.js';

/** Lexical hits ranked for a packet: the seeds, then the lexical channel of the rest. */
const LEXICAL_HITS = 30;
const LEXICAL_SEEDS = 3;
/** Focus entries read at most. */
export const MAX_FOCUS = 10;
/** Nodes a symbol name in the focus stands for at most: the best scored first. */
const PER_FOCUS_NAME = 3;

/** What the task and focus select: the focus's nodes, the ranked hits (the ANSWER first), the seeds. */
export interface ContextSeeds {
  focusIds: string[];
  /** Focus entries that named nothing in the graph. */
  unknownFocus: string[];
  lexical: LexicalHit[];
  seeds: string[];
  terms: SearchTerms;
  semantic: SemanticUse;
  /** Whether any node of the commit has a summary. */
  hasSummaries: boolean;
}

/**
 * resolve_context's seeds: the focus (node ids, file paths, symbol names — a name gives its best
 * scored PER_FOCUS_NAME nodes; an entry that names nothing is reported, not dropped silently),
 * then the answer and the next best hits of the task's lexical search, without repeats.
 */
export async function contextSeeds(
  ctx: Pick<Context, 'db' | 'graphs' | 'memory' | 'timing'>,
  g: { graphId: string; commitHash: string; uploadedAt: string },
  task: string,
  focus: string[],
  intent?: Intent,
): Promise<ContextSeeds> {
  const focusIds: string[] = [];
  const unknownFocus: string[] = [];
  for (const f of focus.slice(0, MAX_FOCUS)) {
    const direct = await nodesByIds(ctx.db, g, [f]);
    if (direct.length) {
      focusIds.push(f);
      continue;
    }
    const files = await fileNodes(ctx.db, g, [f.replace(/^\.?\//, '')]);
    const found = files.length ? files : await nodesNamed(ctx.db, g, f, PER_FOCUS_NAME);
    if (found.length) focusIds.push(...found);
    else unknownFocus.push(f);
  }
  const asked = searchTerms(task);
  const terms = intent === 'concept' ? { ...asked, asksDefinition: true } : asked;
  const index = await ctx.graphs.indexes.get(ctx.db, g);
  const { hits: lexical, semantic } = await searchNodes(ctx, g, index, terms, LEXICAL_HITS);
  const seeds = [...new Set([...focusIds, ...lexical.slice(0, LEXICAL_SEEDS).map((h) => h.node_id)])];
  return {
    focusIds: [...new Set(focusIds)],
    unknownFocus,
    lexical,
    seeds,
    terms,
    semantic,
    hasSummaries: index.hasSummaries,
  };
}
