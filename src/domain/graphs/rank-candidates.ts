import type { PacketNodeRow } from '../../db/queries/graphs/node-reads.js';
import { RRF_K } from '../../rank-fusion.js';
import { MAX_FOCUS } from './context-seeds.js';
import { fileKind, PATH_PENALTY } from '../../file-kind.js';
import { EXPANSION, type Intent } from './intents.js';
import type { IndexedNode, SearchIndex } from './search-index.js';

/**
 * How much each channel counts in the fused order: the task's words most (issue 21: a gold node
 * was in the packet but typically 4th, behind nodes that were merely near a seed or well scored).
 */
export const CHANNEL_WEIGHTS = {
  lexical: 4,
  hop: 1,
  heuristic: 1,
};

/** Nodes reached from each seed that may enter the packet. */
const PER_SEED = 40;

/** What ranking a candidate reads of its node (the search index holds it: no database read). */
export type CandidateNode = Pick<
  IndexedNode,
  'node_id' | 'name' | 'type' | 'file_path' | 'start_line' | 'end_line' | 'score' | 'secure'
>;

/** A node that may enter the packet, with what ranks it: its indexed node while ranked, its whole row once shown. */
export interface Candidate<Row extends CandidateNode | PacketNodeRow = PacketNodeRow> {
  row: Row;
  seed: boolean;
  lexical: number | null; // rank among the lexical hits (1-based)
  hop: number | null; // distance from the nearest seed
  exact: boolean;
  score: number; // fused
}

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
export function heuristic(r: CandidateNode, intent: Intent): number {
  let h = (r.score ?? 0) + 1;
  if (DEFINITIONS.has(r.type)) h *= 1.5;
  h *= PATH_PENALTY[fileKind(r.type, r.file_path)];
  if (intent === 'security-audit' && r.secure) h *= 3;
  return h;
}

/** The seeds of a packet and the lexical ranking they came from (the ANSWER first). */
export interface SeedSet {
  focusIds: string[];
  lexical: Array<{ node_id: string; exact: boolean }>;
  seeds: string[];
}

/**
 * resolve_context's ranking: the seeds expanded over edges as the intent says (each node keeps its
 * nearest hop), then ranked by reciprocal rank fusion of three channels — lexical (rank among the
 * task's hits), structural (hop) and heuristic — with the seeds leading: the focus, then the best
 * lexical hits in their order (the first is the ANSWER), then everything else in the fused order.
 * The walks and the nodes come from the commit's search index (in process); an id no node holds
 * (an edge to nothing) is left out.
 */
export function rankCandidates(
  index: SearchIndex,
  intent: Intent,
  { focusIds, lexical, seeds }: SeedSet,
  weights: { lexical: number; hop: number; heuristic: number } = CHANNEL_WEIGHTS,
): Candidate<CandidateNode>[] {
  const hops = new Map<string, number>(seeds.map((s) => [s, 0]));
  const plan = EXPANSION[intent];
  for (const seed of seeds) {
    for (const direction of plan.directions) {
      for (const d of index.walk(seed, direction, plan.radius).slice(0, PER_SEED))
        hops.set(d.node_id, Math.min(hops.get(d.node_id) ?? Infinity, d.hop));
    }
  }
  const lexicalRank = new Map(lexical.map((h, i) => [h.node_id, i + 1]));
  const exact = new Set(lexical.filter((h) => h.exact).map((h) => h.node_id));
  const ids = [...new Set([...hops.keys(), ...lexicalRank.keys()])];
  const rows = ids.map((id) => index.anyNode(id)).filter((n): n is IndexedNode => n !== undefined);

  const candidates: Candidate<CandidateNode>[] = rows.map((row) => ({
    row,
    seed: seeds.includes(row.node_id),
    lexical: lexicalRank.get(row.node_id) ?? null,
    hop: hops.get(row.node_id) ?? null,
    exact: exact.has(row.node_id),
    score: 0,
  }));
  const rankBy = (
    values: Array<[Candidate<CandidateNode>, number | null]>,
    better: (a: number, b: number) => number,
    weight: number,
  ) => {
    const present = values.filter(([, v]) => v !== null) as Array<[Candidate<CandidateNode>, number]>;
    present.sort((a, b) => better(a[1], b[1]) || a[0].row.node_id.localeCompare(b[0].row.node_id));
    present.forEach(([c], i) => (c.score += weight / (RRF_K + i + 1)));
  };
  rankBy(
    candidates.map((c) => [c, c.lexical]),
    (a, b) => a - b,
    weights.lexical,
  );
  rankBy(
    candidates.map((c) => [c, c.hop]),
    (a, b) => a - b,
    weights.hop,
  );
  rankBy(
    candidates.map((c) => [c, heuristic(c.row, intent)]),
    (a, b) => b - a,
    weights.heuristic,
  );
  const seedRank = (c: Candidate<CandidateNode>) => {
    const focus = focusIds.indexOf(c.row.node_id);
    if (focus !== -1) return focus;
    return c.seed && c.lexical !== null ? MAX_FOCUS * 3 + c.lexical : Infinity;
  };
  return candidates.sort(
    (a, b) => seedRank(a) - seedRank(b) || b.score - a.score || a.row.node_id.localeCompare(b.row.node_id),
  );
}
