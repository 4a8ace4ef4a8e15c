import { z } from 'zod';
import { changedNodes, reachableNodes } from '../../db/queries/graph-impact.js';
import { nodesById } from '../../db/queries/graphs/node-reads.js';
import { validationError } from '../../errors.js';
import type { Context } from '../context.js';
import { locateByName } from './locate-node.js';
import { edgeEnd, NodeLocationSchema, NodeRefSchema, ProvenanceSchema } from './model.js';
import { provenanceOf, resolveGraph, type ResolvedGraph } from './resolve-graph.js';

export const DIRECTIONS = ['upstream', 'downstream', 'both'] as const;
export type Direction = (typeof DIRECTIONS)[number];

/** Dependents listed at hop 1 before the walk stops there (and says so). */
const HOP1_LIMIT = 100;
/** Dependents listed in all. */
const TOTAL_LIMIT = 500;
/** Changed nodes whose dependents a commit range lists. */
const CHANGES_WITH_DEPENDENTS = 50;

/** A node reached from the target, `hop` edges away. */
export const DependentSchema = NodeRefSchema.omit({ edgeType: true }).extend({
  hop: z.number().int(),
  direction: z.enum(['upstream', 'downstream']),
  /** The edge type that reached it (toward the target). */
  via: z.string(),
});
export type Dependent = z.output<typeof DependentSchema>;

/** A node a commit range added, removed or changed the code of. */
export const ChangeSchema = NodeLocationSchema.omit({ endLine: true }).extend({
  change: z.enum(['ADDED', 'REMOVED', 'CODECHANGED']),
  /** Upstream dependents at hop 1 (in the commit that holds the node). */
  dependents: z.array(
    z.object({ nodeId: z.string(), filePath: z.string(), startLine: z.number().int(), via: z.string() }),
  ),
});
export type Change = z.output<typeof ChangeSchema>;

/** What `impact` returns: a target's dependents (mode "target") or a commit range's changes (mode "range"). */
export const ImpactResultSchema = z.object({
  mode: z.enum(['target', 'range']),
  graphId: z.string(),
  repo: z.string(),
  commitHash: z.string(),
  target: NodeLocationSchema.omit({ endLine: true }).optional(),
  direction: z.enum(DIRECTIONS).optional(),
  radius: z.number().int().optional(),
  dependents: z.array(DependentSchema).optional(),
  from: z.string().optional(),
  to: z.string().optional(),
  changes: z.array(ChangeSchema).optional(),
  total: z.number().int(),
  truncated: z.boolean().describe('More than 100 dependents at hop 1 (the walk stopped there) or more than 500 in all'),
  provenance: ProvenanceSchema,
});
export type ImpactResult = z.output<typeof ImpactResultSchema>;

type Graph = { graphId: string; commitHash: string };

/** The node a target names: a node id (first of repeated ids), else a symbol name (see locateByName); else NOT_FOUND. */
async function locate(ctx: Pick<Context, 'db'>, graph: ResolvedGraph, target: string) {
  const byId = await nodesById(ctx.db, graph, target);
  if (byId.length > 0) return byId[0]!;
  const { nodeId } = await locateByName(ctx, graph, 'target', target);
  return (await nodesById(ctx.db, graph, nodeId))[0]!;
}

/**
 * Nodes within `radius` edges of the target, against the edge direction (upstream: what depends on
 * it) or along it (downstream); see reachableNodes.
 */
export async function walk(
  ctx: Pick<Context, 'db'>,
  g: Graph,
  nodeId: string,
  direction: 'upstream' | 'downstream',
  radius: number,
): Promise<Dependent[]> {
  const rows = await reachableNodes(ctx.db, g, nodeId, direction, radius);
  return rows.map((r) => ({
    ...edgeEnd(r),
    hop: r.hop,
    direction,
    via: r.via,
  }));
}

/** `impact`: what depends on a node (upstream), what it depends on (downstream), or what a commit range changed. */
export async function impact(
  ctx: Pick<Context, 'db' | 'caller' | 'defaultRepo'>,
  input: { target?: string; direction: Direction; radius: number; from?: string; to?: string; repo?: string },
): Promise<ImpactResult> {
  if ((input.from === undefined) !== (input.to === undefined)) {
    throw validationError([
      { field: input.from === undefined ? 'from' : 'to', message: 'from and to go together (a commit range)' },
    ]);
  }
  if (input.from !== undefined && input.to !== undefined) {
    const to = await resolveGraph(ctx, input.repo, input.to);
    const from = await resolveGraph(ctx, to.graphId, input.from);
    const changes = await changedNodes(ctx.db, to.graphId, from.commitHash, to.commitHash);
    const listed: Change[] = [];
    for (const [i, c] of changes.entries()) {
      let dependents: Change['dependents'] = [];
      if (i < CHANGES_WITH_DEPENDENTS) {
        const holder = c.change === 'REMOVED' ? from : to;
        dependents = (await walk(ctx, holder, c.node_id, 'upstream', 1))
          .slice(0, 20)
          .map((d) => ({ nodeId: d.nodeId, filePath: d.filePath, startLine: d.startLine, via: d.via }));
      }
      listed.push({
        change: c.change,
        nodeId: c.node_id,
        name: c.name,
        type: c.type,
        filePath: c.file_path,
        startLine: c.start_line,
        dependents,
      });
    }
    return {
      mode: 'range',
      graphId: to.graphId,
      repo: to.repo,
      commitHash: to.commitHash,
      from: from.commitHash,
      to: to.commitHash,
      changes: listed.slice(0, TOTAL_LIMIT),
      total: changes.length,
      truncated: changes.length > TOTAL_LIMIT,
      provenance: provenanceOf(to),
    };
  }
  if (input.target === undefined)
    throw validationError([
      { field: 'target', message: 'give a target (nodeId or symbol name), or from and to commits' },
    ]);

  const graph = await resolveGraph(ctx, input.repo);
  const node = await locate(ctx, graph, input.target);
  const directions: Array<'upstream' | 'downstream'> =
    input.direction === 'both' ? ['upstream', 'downstream'] : [input.direction];
  let dependents: Dependent[] = [];
  let truncated = false;
  for (const direction of directions) {
    let found = await walk(ctx, graph, node.node_id, direction, input.radius);
    const first = found.filter((d) => d.hop === 1);
    if (first.length > HOP1_LIMIT) {
      // A hub: its direct dependents alone are more than anyone reads; the walk stops at hop 1.
      found = first.slice(0, HOP1_LIMIT);
      truncated = true;
    }
    dependents = dependents.concat(found);
  }
  const total = dependents.length;
  if (total > TOTAL_LIMIT) truncated = true;
  return {
    mode: 'target',
    graphId: graph.graphId,
    repo: graph.repo,
    commitHash: graph.commitHash,
    target: {
      nodeId: node.node_id,
      name: node.name,
      type: node.type,
      filePath: node.file_path,
      startLine: node.start_line,
    },
    direction: input.direction,
    radius: input.radius,
    dependents: dependents.slice(0, TOTAL_LIMIT),
    total,
    truncated,
    provenance: provenanceOf(graph),
  };
}

const where = (filePath: string, line: number) => (filePath ? `${filePath}:${line}` : '(external)');

/** Compact `file:line` lines, as DevLens prints them. */
export function renderImpact(out: ImpactResult): string {
  if (out.mode === 'range') {
    const head = `${out.total} changed node(s) in ${out.repo} ${out.from!.slice(0, 10)}..${out.to!.slice(0, 10)}${out.truncated ? ' (list truncated)' : ''}`;
    const lines = out.changes!.map((c) => {
      const deps = c.dependents.length
        ? ` ← ${c.dependents.map((d) => where(d.filePath, d.startLine)).join(', ')}`
        : '';
      return `${c.change} ${where(c.filePath, c.startLine)} ${c.name} (${c.type.toLowerCase()})${deps}`;
    });
    return [head, ...lines].join('\n');
  }
  const t = out.target!;
  const head =
    `${out.direction} of ${t.nodeId} (${where(t.filePath, t.startLine)}), radius ${out.radius}, in ${out.repo} @ ${out.commitHash.slice(0, 10)}: ` +
    `${out.total} node(s)${out.truncated ? ` — truncated: more than ${HOP1_LIMIT} at hop 1, the walk stopped there` : ''}`;
  const lines = out.dependents!.map(
    (d) =>
      `${out.direction === 'both' ? `${d.direction === 'upstream' ? '↑' : '↓'} ` : ''}${d.hop} ${where(d.filePath, d.startLine)} ${d.name} (${d.via.toLowerCase()})`,
  );
  return [head, ...lines].join('\n');
}
