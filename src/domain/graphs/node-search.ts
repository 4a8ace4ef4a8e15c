import type { Context } from '../context.js';
import { shapeAnswer } from './answer-shape.js';
import { lexicalSearch, type LexicalHit } from './lexical-search.js';
import type { SearchIndex } from './search-index.js';
import type { SearchTerms } from './search-terms.js';
import { semanticNodeHits, type SemanticContext, type SemanticStatus } from './semantic-nodes.js';

/** Hits each channel offers the fusion (more than any caller keeps, so a node's place does not depend on `limit`). */
const POOL = 50;

/**
 * Where a node found by meaning alone enters the ranking (issue 21): at SEMANTIC_WEIGHT × its
 * similarity scaled from the channel's POOL-th node (0) to its nearest (1), on the scale where the
 * best lexical hit is 1. The nearest node no word of the question reaches thus ranks with lexical
 * hits that scored under 0.3 of the best — above those that matched only a common word — and never
 * above a hit that the question's words select well. Nodes the words found keep their lexical order:
 * with GloVe (bench/research/semantic-fusion.ts, docs/decisions/0010) every way of letting
 * similarity re-order them — score or rank fusion at any weight, re-ranking, tie-breaking — cost
 * more questions than it won, on code questions that share words with their answers.
 */
export const SEMANTIC_WEIGHT = 0.3;

/** How the semantic channel took part in a search. */
export interface SemanticUse {
  status: SemanticStatus;
  /** Why it did not (no embedder, embedder down) or what it lacked (nodes still waiting), else null. */
  note: string | null;
}

/**
 * Code search with both channels: the lexical ranking (lexical-search.ts) and, when an embedder is
 * configured, the nodes nearest the query's meaning (semantic-nodes.ts). The lexical hits keep their
 * order; a node the words miss but the meaning finds comes in below them as SEMANTIC_WEIGHT says,
 * so a question in words the graph does not hold ("what happens after an outage") still finds
 * `restartOnFailure`, and fusion is never worse than the words alone. Exact names stay first.
 * Without an embedder (or with one down) the ranking is the lexical one, and `semantic` says why.
 * The hit that answers the question leads (answer-shape.ts).
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
  const found = new Set(lexical.map((h) => h.node_id));
  const byMeaning: LexicalHit[] = [];
  semantic.hits.forEach((h, i) => {
    if (found.has(h.node_id)) return;
    const node = index.node(h.node_id);
    const scaled = top > floor ? (sims[i]! - floor) / (top - floor) : 1;
    // On the lexical scale (the best hit's rank is `best`): an empty lexical ranking leaves them in their order.
    if (node) byMeaning.push({ ...node, exact: false, rank: SEMANTIC_WEIGHT * scaled * (best > 0 ? best : 1) });
  });
  const exact = lexical.filter((h) => h.exact);
  const rest = [...lexical.filter((h) => !h.exact), ...byMeaning];
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
