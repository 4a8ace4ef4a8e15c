import { z } from 'zod';
import { commitBranchAndStats } from '../../db/queries/commit-lookup.js';
import { deleteGraph as deleteGraphRows, listGraphs as listGraphRows } from '../../db/queries/graphs/catalogue.js';
import { notFound } from '../../errors.js';
import type { Context } from '../context.js';
import { isoOrNull } from '../iso-date.js';
import { visibleRepos } from '../visibility.js';

export const GraphSummarySchema = z.object({
  graphId: z.string(),
  repo: z.string(),
  latestCommit: z.string().nullable().describe('The commit analyzed last'),
  analyzedAt: z.string().nullable(),
  uploadedAt: z.string().nullable(),
  nodes: z.number().int(),
  edges: z.number().int(),
  commits: z.number().int().describe('Commits kept (GRAPH_RETENTION)'),
});
export type GraphSummary = z.output<typeof GraphSummarySchema>;

/** What `devstream_list_graphs` returns (GET /api/v1/graphs). */
export const ListGraphsResultSchema = z.object({ graphs: z.array(GraphSummarySchema) });
export type ListGraphsResult = z.output<typeof ListGraphsResultSchema>;

/**
 * Every uploaded graph the caller may see, with its latest commit (the one analyzed last). Every
 * read of a graph starts here (resolveGraph, graphMeta, the `repo` tool, resources, completions,
 * hooks), so a graph outside the caller's repos is absent everywhere.
 */
export async function listGraphs(ctx: Pick<Context, 'db' | 'caller'>): Promise<ListGraphsResult> {
  const rows = await listGraphRows(ctx.db, visibleRepos(ctx.caller));
  return {
    graphs: rows.map((r) => ({
      graphId: r.graph_id,
      repo: r.repo,
      latestCommit: r.latest_commit,
      analyzedAt: isoOrNull(r.analyzed_at),
      uploadedAt: isoOrNull(r.uploaded_at),
      nodes: r.nodes ?? 0,
      edges: r.edges ?? 0,
      commits: r.commits,
    })),
  };
}

/** What `devstream_delete_graph` returns (DELETE /api/v1/graphs/{graphId}). */
export const DeleteGraphResultSchema = z.object({ success: z.boolean(), graphId: z.string() });
export type DeleteGraphResult = z.output<typeof DeleteGraphResultSchema>;

/** Deletes a graph and every commit of it; one the caller may not see is NOT_FOUND, and stays. */
export async function deleteGraph(
  ctx: Pick<Context, 'db' | 'caller'>,
  input: { graphId: string },
): Promise<DeleteGraphResult> {
  const visible =
    ctx.caller.repos === undefined || (await listGraphs(ctx)).graphs.some((g) => g.graphId === input.graphId);
  if (!visible || !(await deleteGraphRows(ctx.db, input.graphId)))
    throw notFound(`graphId: no graph with id "${input.graphId}"`, { graphId: input.graphId });
  return { success: true, graphId: input.graphId };
}

/** One graph's summary with its latest commit's statistics and branch; null when there is no such graph. */
export async function graphMeta(
  ctx: Pick<Context, 'db' | 'caller'>,
  graphId: string,
): Promise<(GraphSummary & { branch: string | null; stats: unknown }) | null> {
  const { graphs } = await listGraphs(ctx);
  const graph = graphs.find((g) => g.graphId === graphId);
  if (!graph) return null;
  const latest = graph.latestCommit ? await commitBranchAndStats(ctx.db, graphId, graph.latestCommit) : undefined;
  return { ...graph, branch: latest?.branch ?? null, stats: latest?.stats ?? null };
}
