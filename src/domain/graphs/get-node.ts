import { z } from 'zod';
import { neighbours, type Neighbour } from '../../db/queries/graphs/edge-reads.js';
import { nodesById } from '../../db/queries/graphs/node-reads.js';
import type { Context } from '../context.js';
import { locateByName, missing } from './locate-node.js';
import { edgeEnd, NodeLocationSchema, NodeRefSchema, ProvenanceSchema, type NodeRef } from './model.js';
import { provenanceOf, resolveGraph } from './resolve-graph.js';

export const NODE_PARTS = ['metadata', 'callers', 'callees', 'technical', 'business', 'security', 'code'] as const;
export type NodePart = (typeof NODE_PARTS)[number];
/** What get_node returns when `include` is not given: everything but the code. */
const DEFAULT_PARTS: NodePart[] = ['metadata', 'callers', 'callees', 'technical', 'business', 'security'];
/** Callers and callees listed per node (the total is always given). */
const MAX_NEIGHBOURS = 100;

/**
 * What `get_node` returns: its MCP outputSchema and its REST body. The optional parts are there
 * when `include` asks for them (default: all but code).
 */
export const GetNodeResultSchema = z.object({
  graphId: z.string(),
  repo: z.string(),
  commitHash: z.string(),
  /** How the node was found: by its id, or located from a symbol name. */
  located: z.enum(['id', 'name']),
  node: NodeLocationSchema.extend({
    score: z.number().nullable(),
    /** Overloads: nodes sharing this id, addressed as `<id>#<k>`; 1 when the id is unique. */
    copies: z.number().int().describe('Nodes sharing this id (overloads)'),
    copy: z.number().int(),
    technicalSummary: z.string().nullable().optional(),
    businessSummary: z.string().nullable().optional(),
    security: z.object({ severity: z.string().nullable(), summary: z.string().nullable() }).nullable().optional(),
    metadata: z.record(z.string(), z.unknown()).nullable().optional(),
    extra: z
      .record(z.string(), z.unknown())
      .nullable()
      .optional()
      .describe('Fields of the node the analyzer wrote beyond the known ones'),
  }),
  callers: z.array(NodeRefSchema).optional(),
  callersTotal: z.number().int().optional(),
  callees: z.array(NodeRefSchema).optional(),
  calleesTotal: z.number().int().optional(),
  code: z.string().nullable().optional(),
  alternatives: z.array(z.string()).describe('Other nodes a symbol name could mean'),
  provenance: ProvenanceSchema,
});
export type GetNodeResult = z.output<typeof GetNodeResultSchema>;

function ref(n: Neighbour): NodeRef {
  return { ...edgeEnd(n), edgeType: n.edge_type };
}

/**
 * `get_node`: one node's summaries, metadata, callers, callees and (asked for) code. `node` is a node
 * id, `<id>#<k>` (the k-th of a repeated id) or a symbol name (see locateByName); anything else is
 * NOT_FOUND with the closest symbols as suggestions.
 */
export async function getNode(
  ctx: Pick<Context, 'db' | 'caller' | 'defaultRepo'>,
  input: { node: string; include?: NodePart[]; repo?: string },
): Promise<GetNodeResult> {
  const graph = await resolveGraph(ctx, input.repo);
  const parts = new Set(input.include ?? DEFAULT_PARTS);
  // `<id>#<k>` addresses the k-th node of a repeated id.
  const addressed = /^(.*)#(\d+)$/.exec(input.node);
  let copy = 1;
  let copies = await nodesById(ctx.db, graph, input.node);
  if (copies.length === 0 && addressed) {
    const id = addressed[1]!;
    const of = await nodesById(ctx.db, graph, id);
    if (of.length > 0) {
      copy = Number(addressed[2]);
      // A copy the id does not have is not found: answering another copy would be inventing.
      if (copy < 1 || copy > of.length)
        throw missing(
          graph,
          'node',
          input.node,
          of.map((c) => `${id}#${c.copy}`),
        );
      copies = of;
    }
  }
  let located: 'id' | 'name' = 'id';
  let alternatives: string[] = [];
  if (copies.length === 0) {
    // Not an id: a symbol name, matched exactly (any case); else NOT_FOUND with suggestions.
    const named = await locateByName(ctx, graph, 'node', input.node);
    located = 'name';
    alternatives = named.alternatives;
    copies = await nodesById(ctx.db, graph, named.nodeId);
  }
  const n = copies[copy - 1]!;
  const result: GetNodeResult = {
    graphId: graph.graphId,
    repo: graph.repo,
    commitHash: graph.commitHash,
    located,
    node: {
      nodeId: n.node_id,
      name: n.name,
      type: n.type,
      filePath: n.file_path,
      startLine: n.start_line,
      endLine: n.end_line,
      score: n.score === null ? null : Number(n.score),
      copies: n.copies,
      copy: n.copy,
    },
    alternatives,
    provenance: provenanceOf(graph),
  };
  if (parts.has('technical')) result.node.technicalSummary = n.technical_summary;
  if (parts.has('business')) result.node.businessSummary = n.business_summary;
  if (parts.has('security')) {
    result.node.security =
      n.security_severity || n.security_summary ? { severity: n.security_severity, summary: n.security_summary } : null;
  }
  if (parts.has('metadata')) {
    result.node.metadata = n.metadata;
    result.node.extra = n.extra;
  }
  if (parts.has('callers')) {
    const callers = await neighbours(ctx.db, graph, n.node_id, 'in', MAX_NEIGHBOURS);
    result.callers = callers.rows.map(ref);
    result.callersTotal = callers.total;
  }
  if (parts.has('callees')) {
    const callees = await neighbours(ctx.db, graph, n.node_id, 'out', MAX_NEIGHBOURS);
    result.callees = callees.rows.map(ref);
    result.calleesTotal = callees.total;
  }
  if (parts.has('code')) result.code = n.code;
  return result;
}

const refLine = (r: NodeRef) =>
  `  ${r.edgeType.toLowerCase()} ${r.nodeId}  ${r.type.toLowerCase()}${r.filePath ? `  ${r.filePath}:${r.startLine}` : ''}`;

export function renderNode(out: GetNodeResult): string {
  const n = out.node;
  const lines = [
    `${n.nodeId}${n.copies > 1 ? ` (copy ${n.copy} of ${n.copies}: ${n.nodeId}#1…#${n.copies})` : ''}`,
    `${n.type.toLowerCase()} ${n.name} — ${n.filePath || '(no file)'}:${n.startLine}-${n.endLine}  [${out.repo} @ ${out.commitHash.slice(0, 10)}]`,
  ];
  if (out.located === 'name' && out.alternatives.length > 0)
    lines.push(`Located by name; also: ${out.alternatives.join(', ')}`);
  if (n.technicalSummary !== undefined)
    lines.push(`Technical: ${n.technicalSummary ?? '(no summary: structure-only graph)'}`);
  if (n.businessSummary !== undefined && n.businessSummary) lines.push(`Business: ${n.businessSummary}`);
  if (n.security) lines.push(`Security: ${[n.security.severity, n.security.summary].filter(Boolean).join(' — ')}`);
  if (out.callers) {
    lines.push(`Callers (${out.callersTotal}):`, ...out.callers.map(refLine));
    if ((out.callersTotal ?? 0) > out.callers.length) lines.push(`  … ${out.callersTotal! - out.callers.length} more`);
  }
  if (out.callees) {
    lines.push(`Callees (${out.calleesTotal}):`, ...out.callees.map(refLine));
    if ((out.calleesTotal ?? 0) > out.callees.length) lines.push(`  … ${out.calleesTotal! - out.callees.length} more`);
  }
  if (out.code !== undefined) lines.push('Code:', out.code ?? '(no code stored)');
  return lines.join('\n');
}
