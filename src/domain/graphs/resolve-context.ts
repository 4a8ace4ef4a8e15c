import { z } from 'zod';
import { commitNodeCount } from '../../db/queries/commit-lookup.js';
import { commitHasSummaries, nodesByIds } from '../../db/queries/graphs/node-reads.js';
import type { Context } from '../context.js';
import { contextSeeds } from './context-seeds.js';
import { defaultBudget, INTENTS, type Intent } from './intents.js';
import { ProvenanceSchema, SemanticUseSchema } from './model.js';
import type { SemanticUse } from './node-search.js';
import { codeReserve, codeSection } from './packet-code.js';
import { DEFAULT_PACKET } from './packet-settings.js';
import { nodeTexts, snippetTerms } from './packet-text.js';
import { CHANNEL_WEIGHTS, rankCandidates, type Candidate } from './rank-candidates.js';
import { legacyContextSeeds } from './legacy-context-seeds.js';
import { renderPacket, SNIPPETS_PER_FILE, type PacketShape } from './render-packet.js';
import { provenanceOf, resolveGraph } from './resolve-graph.js';

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
  semantic: SemanticUseSchema,
  provenance: ProvenanceSchema,
});
export type ResolveContextResult = z.output<typeof ResolveContextResultSchema>;

export const approxTokens = (text: string) => Math.ceil(text.length / 4);

/** Most nodes a packet shows: with META segments, 20 keep the median packet under 1,500 tokens (bench:context). */
export const MAX_PACKET_NODES = 20;

/**
 * `resolve_context`: a task-shaped packet (design.md §7, spec "Packet format"): seeds from the focus
 * and a lexical search of the task, expanded over edges as the intent says, ranked by reciprocal
 * rank fusion of the lexical, structural (hop) and heuristic channels, rendered within the budget —
 * the lowest-ranked non-seed node is dropped until the packet fits, and NEXT says what was cut. With
 * a CODE section (`code`, else DEVLENS_PACKET_CODE) the nodes are fitted to the budget less a reserve
 * for it (packet-code.ts), and the bodies take the room left: code gives way first.
 */
export async function resolveContext(
  ctx: Pick<Context, 'db' | 'caller' | 'defaultRepo' | 'graphs' | 'packet' | 'memory' | 'timing'>,
  input: {
    task: string;
    intent: Intent;
    focus?: string[];
    tokenBudget?: number;
    repo?: string;
    commitHash?: string;
    code?: boolean;
  },
): Promise<ResolveContextResult> {
  // Server-Timing (REST) gets each part: graph, search, expand, render.
  let mark = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    ctx.timing(name, now - mark);
    mark = now;
  };
  const graph = await resolveGraph(ctx, input.repo, input.commitHash);
  lap('graph');
  const g = { graphId: graph.graphId, commitHash: graph.commitHash };
  const intent = input.intent;

  const settings = ctx.packet ?? DEFAULT_PACKET;
  // DEVLENS_PACKET_RANKER=legacy: the ranking before issue 21 (storage-order candidates, the top
  // lexical hit as ANSWER, channels fused with equal weights, no node cap), for diagnosis.
  const legacy = settings.ranker === 'legacy';
  const seeded = legacy
    ? {
        ...(await legacyContextSeeds(ctx, g, input.task, input.focus ?? [])),
        unknownFocus: [] as string[],
        semantic: {
          status: 'no-embedder',
          note: 'DEVLENS_PACKET_RANKER=legacy: the lexical ranking before issue 21',
        } as SemanticUse,
      }
    : await contextSeeds(ctx, graph, input.task, input.focus ?? [], intent);
  const { focusIds, lexical, unknownFocus, semantic } = seeded;
  lap('search');
  const index = await ctx.graphs.indexes.get(ctx.db, graph);
  const ranked = rankCandidates(index, intent, seeded, legacy ? { lexical: 1, hop: 1, heuristic: 1 } : CHANNEL_WEIGHTS);
  // A packet names the nodes that matter, not all it could reach: past MAX_PACKET_NODES the rest
  // is cut as a lower-ranked node would be to fit the budget (NEXT says so). Only the nodes it may
  // show are read whole (code, summaries) from the database.
  const cap = legacy ? ranked.length : MAX_PACKET_NODES;
  const beyond = ranked.slice(cap);
  const [rows, nodeCount] = await Promise.all([
    nodesByIds(
      ctx.db,
      g,
      ranked.slice(0, cap).map((c) => c.row.node_id),
    ),
    commitNodeCount(ctx.db, g),
  ]);
  const whole = new Map(rows.map((r) => [r.node_id, r]));
  const candidates: Candidate[] = ranked.slice(0, cap).flatMap((c) => {
    const row = whole.get(c.row.node_id);
    return row ? [{ ...c, row }] : [];
  });
  lap('expand');
  const budget = input.tokenBudget ?? defaultBudget(intent, nodeCount);
  const top = lexical[0];
  const matched = !top
    ? focusIds.length
      ? `no node matches the words of "${input.task}"; showing the focus and its neighbours`
      : `no node matches the words of "${input.task}" — try other words or find_symbols`
    : top.exact
      ? `exact match for "${top.name}"`
      : `closest match for "${input.task.slice(0, 80)}" is "${top.name}" — verify intent`;
  // An answer found by its words alone while meaning could not help is worth a word of warning.
  const lexicalOnly =
    top && !top.exact && (semantic.status === 'unavailable' || semantic.status === 'pending')
      ? `${matched} (${semantic.status === 'pending' ? 'some nodes are still being embedded' : `lexical search only: ${semantic.note}`})`
      : matched;
  const confidence = unknownFocus.length
    ? `${lexicalOnly}; focus not in the graph: ${unknownFocus
        .slice(0, 3)
        .map((f) => `"${f.slice(0, 80)}"`)
        .join(', ')}${unknownFocus.length > 3 ? ', …' : ''}`
    : lexicalOnly;
  const edges = index.edgesAmong(candidates.map((c) => c.row.node_id));
  const texts = nodeTexts(snippetTerms(input.task), SNIPPETS_PER_FILE);
  const answerRow = candidates[0]?.row;
  const shape: PacketShape = {
    meta: settings.meta,
    answer: settings.answer,
    // Only asked when WHAT would say there is no summary.
    commitHasSummaries:
      settings.answer && answerRow && !texts(answerRow).micro
        ? 'hasSummaries' in seeded
          ? seeded.hasSummaries
          : await commitHasSummaries(ctx.db, g)
        : false,
    code: [],
  };

  let included = candidates;
  let cut: Candidate[] = [];
  const names = (nodes: Array<{ row: { name: string } }>) =>
    `${nodes
      .slice(0, 5)
      .map((c) => c.row.name)
      .join(', ')}${nodes.length > 5 ? ', …' : ''}`;
  const nextHint = () => {
    const answer = included[0];
    const drill = answer
      ? `get_node ${answer.row.node_id} include=["code"] for the source`
      : 'find_symbols with other words';
    const more = beyond.length ? `; ${beyond.length} more related node(s) ranked lower (${names(beyond)})` : '';
    if (cut.length === 0) return `${drill}${more}`;
    return `cut ${cut.length} lower-ranked node(s) to fit ${budget} tokens (${names(cut)}): raise tokenBudget, or ${drill}${more}`;
  };
  const withCode = input.code ?? settings.code;
  const reserve = withCode ? codeReserve(candidates, budget) : 0;
  let packet = renderPacket(g, included, edges, input.task, texts, confidence, nextHint(), shape);
  while (approxTokens(packet) > budget - reserve) {
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
    packet = renderPacket(g, included, edges, input.task, texts, confidence, nextHint(), shape);
  }
  if (withCode) {
    shape.code = codeSection(included, budget * 4 - packet.length);
    if (shape.code.length) packet = renderPacket(g, included, edges, input.task, texts, confidence, nextHint(), shape);
  }
  lap('render');
  return {
    graphId: graph.graphId,
    commitHash: graph.commitHash,
    intent,
    budget,
    origin: 'index',
    approxTokens: approxTokens(packet),
    packet,
    semantic,
    provenance: provenanceOf(graph),
  };
}
