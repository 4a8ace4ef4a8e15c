import type { Context } from '../context.js';
import { shapeAnswer } from './answer-shape.js';
import { lexicalSearch, type LexicalHit } from './lexical-search.js';
import type { SearchIndex } from './search-index.js';
import type { SearchTerms } from './search-terms.js';
import { semanticNodeHits, type SemanticContext, type SemanticStatus } from './semantic-nodes.js';

/** Hits each channel offers the fusion (more than any caller keeps, so a node's place does not depend on `limit`). */
const POOL = 50;

/**
 * The semantic channel's weight against the lexical one: scores are fused, not ranks (as memory
 * search fuses them, issue 21): a weak embedder's near-equal neighbours do not push a lexical hit
 * with rare words out, and a node the words miss but the meaning finds can still come up. Small:
 * with GloVe (bench:context) every weight from 0.05 to 0.5 left the figures within a question or
 * two of lexical alone; a code model may deserve more (measure it with bench:context --embedder).
 */
export const SEMANTIC_WEIGHT = 0.1;

/** How the semantic channel took part in a search. */
export interface SemanticUse {
  status: SemanticStatus;
  /** Why it did not (no embedder, embedder down) or what it lacked (nodes still waiting), else null. */
  note: string | null;
}

/**
 * Code search with both channels: the lexical ranking (lexical-search.ts) and, when an embedder is
 * configured, the nodes nearest the query's meaning (semantic-nodes.ts), fused by score — each
 * lexical rank over the best one, plus SEMANTIC_WEIGHT × the cosine similarity scaled from the
 * channel's POOL-th node (0) to its nearest (1). Exact names stay first. Without an embedder (or
 * with one down) the ranking is the lexical one, and `semantic` says why. The hit that answers the
 * question leads (answer-shape.ts).
 */
export async function searchNodes(
  ctx: Pick<Context, 'db'> & Partial<SemanticContext>,
  graph: { graphId: string; commitHash: string },
  index: SearchIndex,
  terms: SearchTerms,
  limit: number,
): Promise<{ hits: LexicalHit[]; semantic: SemanticUse }> {
  const semanticCtx = ctx.memory && ctx.timing ? (ctx as SemanticContext) : null;
  const shaped = async (ranked: LexicalHit[]) => (await shapeAnswer(ctx, graph, index, ranked, terms)).slice(0, limit);
  const [lexical, semantic] = await Promise.all([
    lexicalSearch(ctx, index, terms, POOL),
    semanticCtx && terms.words.length > 0
      ? semanticNodeHits(semanticCtx, graph, terms.text, POOL)
      : Promise.resolve({ hits: [], status: 'no-embedder' as const, note: 'no embedder in this context' }),
  ]);
  const use: SemanticUse = { status: semantic.status, note: semantic.note };
  if (semantic.hits.length === 0) return { hits: await shaped(lexical), semantic: use };

  const best = Math.max(...lexical.filter((h) => !h.exact).map((h) => h.rank), 0);
  const sims = semantic.hits.map((h) => 1 - h.distance);
  const top = sims[0]!;
  const floor = sims.length >= POOL ? sims[sims.length - 1]! : Math.min(...sims) - 1e-9;
  const fused = new Map<string, LexicalHit>();
  for (const h of lexical) fused.set(h.node_id, { ...h, rank: h.exact ? h.rank : best > 0 ? h.rank / best : 0 });
  semantic.hits.forEach((h, i) => {
    const scaled = top > floor ? (sims[i]! - floor) / (top - floor) : 1;
    const before = fused.get(h.node_id);
    if (before) {
      if (!before.exact) before.rank += SEMANTIC_WEIGHT * scaled;
      return;
    }
    const node = index.node(h.node_id);
    if (node) fused.set(h.node_id, { ...node, exact: false, rank: SEMANTIC_WEIGHT * scaled });
  });
  const exact = lexical.filter((h) => h.exact);
  const rest = [...fused.values()].filter((h) => !h.exact);
  const hits = [
    ...exact,
    ...rest.sort(
      (a, b) =>
        b.rank - a.rank ||
        (b.score ?? 0) - (a.score ?? 0) ||
        (a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : 0),
    ),
  ];
  return { hits: await shaped(hits), semantic: use };
}
