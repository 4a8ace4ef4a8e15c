import {
  edgesAmong,
  fileNodes,
  findSymbols,
  nodesByIds,
  nodesByName,
  type PacketNodeRow,
} from '../../db/queries/graphs.js';
import type { Context } from '../context.js';
import { fileKind, PATH_PENALTY } from './file-kind.js';
import { symbolQuery } from './find-symbols.js';
import { STOP_WORDS } from './stop-words.js';
import { RRF_K } from '../rank-fusion.js';
import { walk } from './impact.js';
import type { Provenance } from './model.js';
import { nodeTexts, type NodeTexts } from './packet-text.js';
import { provenanceOf, resolveGraph } from './resolve-graph.js';

export const INTENTS = [
  'pinpoint',
  'reference-list',
  'flow',
  'overview',
  'concept',
  'security-audit',
  'exploratory',
] as const;
export type Intent = (typeof INTENTS)[number];

/** How each intent expands from its seeds (design.md §7). */
const EXPANSION: Record<Intent, { directions: Array<'upstream' | 'downstream'>; radius: number }> = {
  pinpoint: { directions: ['upstream', 'downstream'], radius: 1 },
  'reference-list': { directions: ['upstream'], radius: 2 },
  flow: { directions: ['downstream'], radius: 2 },
  'security-audit': { directions: ['upstream'], radius: 2 },
  overview: { directions: ['upstream', 'downstream'], radius: 2 },
  concept: { directions: ['upstream', 'downstream'], radius: 2 },
  exploratory: { directions: ['upstream', 'downstream'], radius: 2 },
};
/** Default budgets in tokens, before scaling by repo size. */
const BASE_BUDGET: Record<Intent, number> = {
  pinpoint: 1500,
  'reference-list': 1500,
  flow: 2500,
  overview: 2500,
  concept: 2500,
  'security-audit': 2500,
  exploratory: 2500,
};
const LEXICAL_HITS = 15;
const LEXICAL_SEEDS = 3;
const MAX_FOCUS = 10;
/** Nodes reached from each seed that may enter the packet. */
const PER_SEED = 40;
const MAX_FILES = 8;
const SNIPPETS_PER_FILE = 2;

export interface ResolveContextResult {
  graphId: string;
  commitHash: string;
  intent: Intent;
  budget: number;
  origin: 'index';
  approxTokens: number;
  packet: string;
  provenance: Provenance;
}

interface Candidate {
  row: PacketNodeRow;
  seed: boolean;
  lexical: number | null; // rank among the lexical hits (1-based)
  hop: number | null; // distance from the nearest seed
  exact: boolean;
  score: number; // fused
}

/** The budget an intent gets on a repo of `nodes` nodes: larger repos get up to twice as much. */
export function defaultBudget(intent: Intent, nodes: number): number {
  const factor = Math.min(2, Math.max(1, Math.log10(Math.max(nodes, 1)) / 3));
  return Math.round(BASE_BUDGET[intent] * factor);
}

export const approxTokens = (text: string) => Math.ceil(text.length / 4);

const DEFINITIONS = new Set([
  'FUNCTION',
  'METHOD',
  'CLASS',
  'INTERFACE',
  'ENUM',
  'COMPONENT',
  'HOOK',
  'ROUTE',
  'STRUCT',
  'TRAIT',
  'STATE_STORE',
]);

/** The heuristic channel: the analyzer's structural score, definitions over files, tests last, security first when auditing. */
function heuristic(r: PacketNodeRow, intent: Intent): number {
  let h = (r.score ?? 0) + 1;
  if (DEFINITIONS.has(r.type)) h *= 1.5;
  h *= PATH_PENALTY[fileKind(r.type, r.file_path)];
  if (intent === 'security-audit' && (r.security_summary || r.security_severity)) h *= 3;
  return h;
}

function render(
  graph: { graphId: string; commitHash: string },
  nodes: Candidate[],
  edges: Array<{ from_id: string; to_id: string; type: string }>,
  task: string,
  texts: (row: PacketNodeRow) => NodeTexts,
  confidence: string,
  next: string,
): string {
  const ids = new Map(nodes.map((c, i) => [c.row.node_id, `N${i + 1}`]));
  const answer = nodes[0];
  const out: string[] = [`GRAPH ${graph.graphId} @ ${graph.commitHash.slice(0, 10)}`];
  if (answer) {
    const a = answer.row;
    out.push(`ANSWER ${ids.get(a.node_id)!.slice(1)}`);
    out.push(`ANSWER ${a.name} (${a.type === 'FILE' ? 'file' : 'symbol'}) — ${a.file_path}:${a.start_line}`);
    out.push(
      `WHAT ${texts(a).micro ?? 'no summary in this graph (structure only): read the code with get_node include=["code"]'}`,
    );
  } else {
    out.push('ANSWER 0');
    out.push(`WHAT nothing in the graph matches "${task}"`);
  }
  out.push(`CONFIDENCE ${confidence}`);
  out.push(`NODES ${nodes.length}`);
  for (const c of nodes) {
    const r = c.row;
    const micro = texts(r).micro;
    out.push(
      `${ids.get(r.node_id)} ${r.name} ${r.type.toLowerCase()} ${r.file_path}:${r.start_line}-${r.end_line}${micro ? `  m:${micro}` : ''}`,
    );
  }
  const flow = edges.filter((e) => ids.has(e.from_id) && ids.has(e.to_id));
  out.push(`FLOW ${flow.length}`);
  for (const e of flow)
    out.push(`${ids.get(e.from_id)} -${e.type.toLowerCase().replace(/_/g, '-')}-> ${ids.get(e.to_id)}`);

  // Files in the order their best node ranks; at most MAX_FILES in full, the rest as pointers.
  const files = new Map<string, Candidate[]>();
  for (const c of nodes) {
    if (!c.row.file_path) continue;
    if (!files.has(c.row.file_path)) files.set(c.row.file_path, []);
    files.get(c.row.file_path)!.push(c);
  }
  out.push(`FILES ${files.size}`);
  let shown = 0;
  const pointers: string[] = [];
  for (const [path, members] of files) {
    const refs = members.map((m) => ids.get(m.row.node_id)).join(',');
    if (shown >= MAX_FILES) {
      pointers.push(`${path} ${refs}`);
      continue;
    }
    shown++;
    out.push(`${path}  ${refs}`);
    const lines = members.flatMap((m) => texts(m.row).snippets).slice(0, SNIPPETS_PER_FILE);
    out.push(...lines);
  }
  if (pointers.length) out.push(`+${pointers.length} more: ${pointers.join('; ')}`);

  const sec = nodes.filter((c) => c.row.security_summary || c.row.security_severity);
  out.push(`SEC ${sec.length}`);
  for (const c of sec)
    out.push(`${ids.get(c.row.node_id)} ${c.row.security_severity ?? 'note'}: ${texts(c.row).security}`);
  out.push(`IDMAP ${nodes.map((c) => `${ids.get(c.row.node_id)}=${c.row.node_id}`).join(' ')}`);
  out.push(`NEXT ${next}`);
  return out.join('\n');
}

/**
 * `resolve_context`: a task-shaped packet (design.md §7, spec "Packet format"): seeds from the focus
 * and a lexical search of the task, expanded over edges as the intent says, ranked by reciprocal
 * rank fusion of the lexical, structural (hop) and heuristic channels, rendered within the budget —
 * the lowest-ranked non-seed node is dropped until the packet fits, and NEXT says what was cut.
 */
export async function resolveContext(
  ctx: Pick<Context, 'db' | 'defaultRepo'>,
  input: { task: string; intent: Intent; focus?: string[]; tokenBudget?: number; repo?: string; commitHash?: string },
): Promise<ResolveContextResult> {
  const graph = await resolveGraph(ctx, input.repo, input.commitHash);
  const g = { graphId: graph.graphId, commitHash: graph.commitHash };
  const intent = input.intent;

  // Seeds: the focus (node ids, symbol names, file paths), then the best lexical hits.
  const focusIds: string[] = [];
  for (const f of (input.focus ?? []).slice(0, MAX_FOCUS)) {
    const direct = await nodesByIds(ctx.db, g, [f]);
    if (direct.length) focusIds.push(f);
    else {
      const files = await fileNodes(ctx.db, g, [f.replace(/^\.?\//, '')]);
      if (files.length) focusIds.push(...files);
      else focusIds.push(...(await nodesByName(ctx.db, g, f)).slice(0, 3).map((r) => r.node_id));
    }
  }
  const search = symbolQuery(input.task, LEXICAL_HITS);
  const lexical = await findSymbols(ctx.db, g, search);
  const seeds = [...new Set([...focusIds, ...lexical.slice(0, LEXICAL_SEEDS).map((h) => h.node_id)])];

  // Expansion by intent: each node keeps its nearest hop.
  const hops = new Map<string, number>(seeds.map((s) => [s, 0]));
  const plan = EXPANSION[intent];
  for (const seed of seeds) {
    for (const direction of plan.directions) {
      const reached = await walk(ctx, g, seed, direction, plan.radius);
      for (const d of reached.slice(0, PER_SEED)) hops.set(d.nodeId, Math.min(hops.get(d.nodeId) ?? Infinity, d.hop));
    }
  }
  const lexicalRank = new Map(lexical.map((h, i) => [h.node_id, i + 1]));
  const exact = new Set(lexical.filter((h) => h.exact).map((h) => h.node_id));
  const ids = [...new Set([...hops.keys(), ...lexicalRank.keys()])];
  const rows = await nodesByIds(ctx.db, g, ids);

  // Three channels fused by reciprocal rank: lexical, structural (hop), heuristic.
  const candidates: Candidate[] = rows.map((row) => ({
    row,
    seed: seeds.includes(row.node_id),
    lexical: lexicalRank.get(row.node_id) ?? null,
    hop: hops.get(row.node_id) ?? null,
    exact: exact.has(row.node_id),
    score: 0,
  }));
  const rankBy = (values: Array<[Candidate, number | null]>, better: (a: number, b: number) => number) => {
    const present = values.filter(([, v]) => v !== null) as Array<[Candidate, number]>;
    present.sort((a, b) => better(a[1], b[1]));
    present.forEach(([c], i) => (c.score += 1 / (RRF_K + i + 1)));
  };
  rankBy(
    candidates.map((c) => [c, c.lexical]),
    (a, b) => a - b,
  );
  rankBy(
    candidates.map((c) => [c, c.hop]),
    (a, b) => a - b,
  );
  rankBy(
    candidates.map((c) => [c, heuristic(c.row, intent)]),
    (a, b) => b - a,
  );
  // The seeds lead — the focus, then the best lexical hits in their order (the first is the ANSWER) —
  // then everything else in the fused order.
  const seedRank = (c: Candidate) => {
    const focus = focusIds.indexOf(c.row.node_id);
    if (focus !== -1) return focus;
    return c.seed && c.lexical !== null ? MAX_FOCUS * 3 + c.lexical : Infinity;
  };
  candidates.sort(
    (a, b) => seedRank(a) - seedRank(b) || b.score - a.score || a.row.node_id.localeCompare(b.row.node_id),
  );

  const nodeCount = await countNodes(ctx, g);
  const budget = input.tokenBudget ?? defaultBudget(intent, nodeCount);
  const top = lexical[0];
  const confidence = !top
    ? focusIds.length
      ? `no node matches the words of "${input.task}"; showing the focus and its neighbours`
      : `no node matches the words of "${input.task}" — try other words or find_symbols`
    : top.exact
      ? `exact match for "${top.name}"`
      : `closest match for "${input.task.slice(0, 80)}" is "${top.name}" — verify intent`;
  const edges = await edgesAmong(
    ctx.db,
    g,
    candidates.map((c) => c.row.node_id),
  );
  const snippetWords = [...new Set(search.words.split(' ').filter((w) => w.length >= 3 && !STOP_WORDS.has(w)))];
  const texts = nodeTexts(snippetWords, SNIPPETS_PER_FILE);

  let included = candidates;
  let cut: Candidate[] = [];
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
  let packet = render(g, included, edges, input.task, texts, confidence, nextHint());
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
    packet = render(g, included, edges, input.task, texts, confidence, nextHint());
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

async function countNodes(ctx: Pick<Context, 'db'>, g: { graphId: string; commitHash: string }): Promise<number> {
  const row = await ctx.db
    .selectFrom('graph_commits')
    .select('node_count')
    .where('graph_id', '=', g.graphId)
    .where('commit_hash', '=', g.commitHash)
    .executeTakeFirst();
  return row?.node_count ?? 0;
}
