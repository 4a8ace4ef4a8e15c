import { z } from 'zod';
import { commitNodeCount } from '../../db/queries/commit-lookup.js';
import { edgesAmong } from '../../db/queries/graphs/edge-reads.js';
import type { Context } from '../context.js';
import { contextSeeds } from './context-seeds.js';
import { defaultBudget, INTENTS, type Intent } from './intents.js';
import { ProvenanceSchema } from './model.js';
import { nodeTexts } from './packet-text.js';
import { rankCandidates, type Candidate } from './rank-candidates.js';
import { renderPacket, SNIPPETS_PER_FILE } from './render-packet.js';
import { provenanceOf, resolveGraph } from './resolve-graph.js';
import { STOP_WORDS } from './stop-words.js';

export { INTENTS, defaultBudget, type Intent } from './intents.js';

/** What `resolve_context` returns: its MCP outputSchema and its REST body. */
export const ResolveContextResultSchema = z.object({
  graphId: z.string(),
  commitHash: z.string(),
  intent: z.enum(INTENTS),
  budget: z.number().int(),
  origin: z.enum(['index']),
  approxTokens: z.number().int().describe('ceil(packet length / 4)'),
  packet: z.string(),
  provenance: ProvenanceSchema,
});
export type ResolveContextResult = z.output<typeof ResolveContextResultSchema>;

export const approxTokens = (text: string) => Math.ceil(text.length / 4);

/** Most nodes a packet shows (DevLens's own packets show about two dozen). */
export const MAX_PACKET_NODES = 24;

/**
 * `resolve_context`: a task-shaped packet (design.md §7, spec "Packet format"): seeds from the focus
 * and a lexical search of the task, expanded over edges as the intent says, ranked by reciprocal
 * rank fusion of the lexical, structural (hop) and heuristic channels, rendered within the budget —
 * the lowest-ranked non-seed node is dropped until the packet fits, and NEXT says what was cut.
 */
export async function resolveContext(
  ctx: Pick<Context, 'db' | 'defaultRepo' | 'graphs'>,
  input: { task: string; intent: Intent; focus?: string[]; tokenBudget?: number; repo?: string; commitHash?: string },
): Promise<ResolveContextResult> {
  const graph = await resolveGraph(ctx, input.repo, input.commitHash);
  const g = { graphId: graph.graphId, commitHash: graph.commitHash };
  const intent = input.intent;

  const seeded = await contextSeeds(ctx, graph, input.task, input.focus ?? []);
  const { focusIds, lexical, terms, unknownFocus } = seeded;
  const candidates = await rankCandidates(ctx, g, intent, seeded);

  const nodeCount = await commitNodeCount(ctx.db, g);
  const budget = input.tokenBudget ?? defaultBudget(intent, nodeCount);
  const top = lexical[0];
  const matched = !top
    ? focusIds.length
      ? `no node matches the words of "${input.task}"; showing the focus and its neighbours`
      : `no node matches the words of "${input.task}" — try other words or find_symbols`
    : top.exact
      ? `exact match for "${top.name}"`
      : `closest match for "${input.task.slice(0, 80)}" is "${top.name}" — verify intent`;
  const confidence = unknownFocus.length
    ? `${matched}; focus not in the graph: ${unknownFocus
        .slice(0, 3)
        .map((f) => `"${f.slice(0, 80)}"`)
        .join(', ')}${unknownFocus.length > 3 ? ', …' : ''}`
    : matched;
  const edges = await edgesAmong(
    ctx.db,
    g,
    candidates.map((c) => c.row.node_id),
  );
  const snippetWords = [
    ...new Set(
      [...terms.identifiers.map((i) => i.toLowerCase()), ...terms.words].filter(
        (w) => w.length >= 3 && !STOP_WORDS.has(w),
      ),
    ),
  ];
  const texts = nodeTexts(snippetWords, SNIPPETS_PER_FILE);

  // A packet names the nodes that matter, not all it could reach: past MAX_PACKET_NODES the rest
  // is cut as a lower-ranked node would be to fit the budget (NEXT says so).
  let included = candidates.slice(0, MAX_PACKET_NODES);
  let cut: Candidate[] = candidates.slice(MAX_PACKET_NODES);
  const nextHint = () => {
    const answer = included[0];
    const drill = answer
      ? `get_node ${answer.row.node_id} include=["code"] for the source`
      : 'find_symbols with other words';
    if (cut.length === 0) return drill;
    return `cut ${cut.length} lower-ranked node(s) to fit ${budget} tokens (${cut
      .slice(0, 5)
      .map((c) => c.row.name)
      .join(', ')}${cut.length > 5 ? ', …' : ''}): raise tokenBudget, or ${drill}`;
  };
  let packet = renderPacket(g, included, edges, input.task, texts, confidence, nextHint());
  while (approxTokens(packet) > budget) {
    let drop = -1;
    for (let i = included.length - 1; i >= 0; i--) {
      if (!included[i]!.seed) {
        drop = i;
        break;
      }
    }
    if (drop === -1) break; // only seeds remain: the packet may exceed the budget
    cut = [included[drop]!, ...cut];
    included = included.filter((_, i) => i !== drop);
    packet = renderPacket(g, included, edges, input.task, texts, confidence, nextHint());
  }
  return {
    graphId: graph.graphId,
    commitHash: graph.commitHash,
    intent,
    budget,
    origin: 'index',
    approxTokens: approxTokens(packet),
    packet,
    provenance: provenanceOf(graph),
  };
}
