import type { PacketNodeRow } from '../../db/queries/graphs/node-reads.js';
import type { NodeTexts } from './packet-text.js';
import type { Candidate } from './rank-candidates.js';

const MAX_FILES = 8;
/** Snippet lines shown per file. */
export const SNIPPETS_PER_FILE = 2;

/** What a packet shows beyond its fixed sections (spec "Packet content toggles"). */
export interface PacketShape {
  /** The `meta:` segment on each NODES line (DEVLENS_PACKET_META). */
  meta: boolean;
  /** The ANSWER, WHAT and CONFIDENCE lines (DEVLENS_PACKET_ANSWER). */
  answer: boolean;
  /** Some node of the commit has a summary: WHAT for an answer without one says the node has none, not the graph. */
  commitHasSummaries: boolean;
  /** The CODE section's lines (codeSection), after FILES; empty: no section. */
  code: string[];
}

const PLAIN: PacketShape = { meta: false, answer: true, commitHasSummaries: false, code: [] };

/**
 * The resolve_context packet (spec "Packet format"): GRAPH, ANSWER, WHAT, CONFIDENCE, the NODES in
 * rank order as N1… (each with its `meta:` segment, then its `m:` summary), the FLOW among them,
 * their FILES (MAX_FILES in full with snippets, the rest as pointers), CODE when asked for, SEC
 * notes, the IDMAP back to node ids, and NEXT.
 */
export function renderPacket(
  graph: { graphId: string; commitHash: string },
  nodes: Candidate[],
  edges: Array<{ from_id: string; to_id: string; type: string }>,
  task: string,
  texts: (row: PacketNodeRow) => NodeTexts,
  confidence: string,
  next: string,
  shape: PacketShape = PLAIN,
): string {
  const ids = new Map(nodes.map((c, i) => [c.row.node_id, `N${i + 1}`]));
  const answer = nodes[0];
  const out: string[] = [`GRAPH ${graph.graphId} @ ${graph.commitHash.slice(0, 10)}`];
  // DEVLENS_PACKET_ANSWER=0: no ANSWER, WHAT or CONFIDENCE — the ranking alone, for diagnosis.
  if (shape.answer && answer) {
    const a = answer.row;
    out.push(`ANSWER ${ids.get(a.node_id)!.slice(1)}`);
    out.push(`ANSWER ${a.name} (${a.type === 'FILE' ? 'file' : 'symbol'}) — ${a.file_path}:${a.start_line}`);
    const none = shape.commitHasSummaries
      ? 'this node has no summary (other nodes of this graph have one)'
      : 'no summary in this graph (structure only)';
    out.push(`WHAT ${texts(a).micro ?? `${none}: read the code with get_node include=["code"]`}`);
  } else if (shape.answer) {
    out.push('ANSWER 0');
    out.push(`WHAT nothing in the graph matches "${task}"`);
  }
  if (shape.answer) out.push(`CONFIDENCE ${confidence}`);
  out.push(`NODES ${nodes.length}`);
  for (const c of nodes) {
    const r = c.row;
    const { micro, meta } = texts(r);
    out.push(
      `${ids.get(r.node_id)} ${r.name} ${r.type.toLowerCase()} ${r.file_path}:${r.start_line}-${r.end_line}${shape.meta && meta ? `  meta:${meta}` : ''}${micro ? `  m:${micro}` : ''}`,
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
  out.push(...shape.code);

  const sec = nodes.filter((c) => c.row.security_summary || c.row.security_severity);
  out.push(`SEC ${sec.length}`);
  for (const c of sec)
    out.push(`${ids.get(c.row.node_id)} ${c.row.security_severity ?? 'note'}: ${texts(c.row).security}`);
  out.push(`IDMAP ${nodes.map((c) => `${ids.get(c.row.node_id)}=${c.row.node_id}`).join(' ')}`);
  out.push(`NEXT ${next}`);
  return out.join('\n');
}
