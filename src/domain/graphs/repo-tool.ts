import { z } from 'zod';
import { dependencyEdges, summaryCoverage } from '../../db/queries/graph-health.js';
import { validationError } from '../../errors.js';
import type { Context } from '../context.js';
import { JobSchema, queueAnalysis } from '../jobs.js';
import { GraphSummarySchema, listGraphs } from './graphs.js';
import { ProvenanceSchema } from './model.js';
import { provenanceOf, resolveGraph } from './resolve-graph.js';

export const REPO_ACTIONS = ['list', 'health', 'freshness', 'analyze'] as const;
export type RepoAction = (typeof REPO_ACTIONS)[number];

/** Cycles listed by `health` (largest first); the count is always given. */
const MAX_CYCLES = 50;
const MAX_CYCLE_NODES = 50;

/** What `repo` returns (one shape for every action; the fields an action fills are optional). */
export const RepoResultSchema = z.object({
  action: z.enum(REPO_ACTIONS),
  repos: z.array(GraphSummarySchema).optional(),
  graphId: z.string().optional(),
  repo: z.string().optional(),
  commitHash: z.string().optional(),
  coverage: z.object({ nodes: z.number().int(), withSummary: z.number().int(), ratio: z.number() }).optional(),
  cycles: z.array(z.array(z.string())).optional().describe('Largest first (at most 50, 50 nodes each)'),
  cyclesTotal: z.number().int().optional(),
  latestCommit: z.string().optional(),
  commit: z.string().nullable().optional(),
  fresh: z.boolean().nullable().optional(),
  message: z.string(),
  provenance: ProvenanceSchema.optional(),
  job: JobSchema.optional().describe('analyze with a path: the queued job'),
});
export type RepoResult = z.output<typeof RepoResultSchema>;

/**
 * Strongly connected components of a directed graph with two or more nodes (Tarjan's algorithm,
 * iterative so that deep call chains cannot overflow the stack), largest first.
 */
export function cyclesOf(edges: Array<[string, string]>): string[][] {
  const adjacency = new Map<string, string[]>();
  for (const [from, to] of edges) {
    if (!adjacency.has(from)) adjacency.set(from, []);
    if (!adjacency.has(to)) adjacency.set(to, []);
    adjacency.get(from)!.push(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const root of adjacency.keys()) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; child: number }> = [{ node: root, child: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = adjacency.get(frame.node)!;
      if (frame.child < targets.length) {
        const to = targets[frame.child++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, child: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1) components.push(component.sort());
      }
    }
  }
  return components.sort((a, b) => b.length - a.length || a[0]!.localeCompare(b[0]!));
}

const ANALYZE_HELP =
  'The server cannot see your working folder: graphs are built where the code is and uploaded. In the ' +
  'repository run `npx devstream-hub analyze . --upload <this server> --repo <name>` (in CI, on every push ' +
  'to main), or upload a DevLens graph: `devstream-hub upload ~/.devlens/graphs/<graphId> --url <this server> ' +
  '--repo <name>`. A checkout mounted on the server (inside ANALYZE_ROOTS) is analyzed here with ' +
  'repo {action: "analyze", path: "<folder on the server>"} (summarize: true also writes summaries with the ' +
  "server's chat model, when it has one).";

/** `repo`: list the graphs, a graph's health (summary coverage, dependency cycles), its freshness, or how to analyze. */
export async function repoTool(
  ctx: Pick<Context, 'db' | 'defaultRepo' | 'jobs' | 'caller'>,
  input: {
    action: RepoAction;
    repo?: string | undefined;
    commit?: string | undefined;
    path?: string | undefined;
    branch?: string | undefined;
    summarize?: boolean | undefined;
  },
): Promise<RepoResult> {
  // Summaries are written by an analysis on the server: asked for anywhere else, they would silently not be.
  if (input.summarize && (input.action !== 'analyze' || input.path === undefined))
    throw validationError([{ field: 'summarize', message: 'only with action "analyze" and a path' }]);
  if (input.action === 'list') {
    const { graphs } = await listGraphs(ctx);
    return {
      action: 'list',
      repos: graphs,
      message: graphs.length ? `${graphs.length} code graph(s)` : `No code graph uploaded yet. ${ANALYZE_HELP}`,
    };
  }
  if (input.action === 'analyze') {
    if (input.path === undefined) return { action: 'analyze', message: ANALYZE_HELP };
    const job = await queueAnalysis(ctx, {
      path: input.path,
      repo: input.repo,
      branch: input.branch,
      summarize: input.summarize,
    });
    const summaries = job.params.summarize ? `, with summaries by ${ctx.jobs.summaryModel}` : '';
    return {
      action: 'analyze',
      repo: String(job.params.repo),
      job,
      message: `Analysis of ${String(job.params.path)} queued as job ${job.jobId} (graph "${String(job.params.repo)}"${summaries}): follow it with devstream_get_job {jobId: "${job.jobId}"} or GET /api/v1/jobs/${job.jobId}.`,
    };
  }

  const graph = await resolveGraph(ctx, input.repo);
  const base = {
    graphId: graph.graphId,
    repo: graph.repo,
    commitHash: graph.commitHash,
    provenance: provenanceOf(graph),
  };
  if (input.action === 'freshness') {
    const asked = input.commit?.trim() || null;
    const fresh =
      asked === null ? null : graph.commitHash === asked || (asked.length >= 7 && graph.commitHash.startsWith(asked));
    const message =
      asked === null
        ? `Latest uploaded commit of ${graph.repo}: ${graph.commitHash} (analyzed ${graph.analyzedAt}). Pass commit=<your HEAD> to compare.`
        : fresh
          ? `Fresh: the graph of ${graph.repo} is at ${asked}.`
          : `Stale: the graph of ${graph.repo} is at ${graph.commitHash.slice(0, 12)}, your commit is ${asked.slice(0, 12)}. ${ANALYZE_HELP}`;
    return { action: 'freshness', ...base, latestCommit: graph.commitHash, commit: asked, fresh, message };
  }

  // health
  const g = { graphId: graph.graphId, commitHash: graph.commitHash };
  const coverage = await summaryCoverage(ctx.db, g);
  const edges = await dependencyEdges(ctx.db, g);
  const all = cyclesOf(edges.map((e) => [e.from_id, e.to_id]));
  const { nodes, with_summary } = coverage;
  const ratio = nodes === 0 ? 0 : Math.round((with_summary / nodes) * 1000) / 1000;
  return {
    action: 'health',
    ...base,
    coverage: { nodes, withSummary: with_summary, ratio },
    cycles: all.slice(0, MAX_CYCLES).map((c) => c.slice(0, MAX_CYCLE_NODES)),
    cyclesTotal: all.length,
    message:
      `${graph.repo} @ ${graph.commitHash.slice(0, 10)}: ${with_summary} of ${nodes} nodes have summaries (${Math.round(ratio * 100)} %)` +
      `${with_summary === 0 ? ' — a structure-only graph: answers come from names, paths and code comments' : ''}; ` +
      `${all.length} dependency cycle(s) over CALLS/IMPORTS${all.length ? `, the largest of ${all[0]!.length} nodes` : ''}.`,
  };
}

export function renderRepo(out: RepoResult): string {
  if (out.action === 'list') {
    if (!out.repos?.length) return out.message;
    return [
      out.message,
      ...out.repos.map(
        (g) =>
          `- ${g.repo} (${g.graphId}) @ ${g.latestCommit?.slice(0, 10) ?? '-'}: ${g.nodes} nodes, ${g.edges} edges, analyzed ${g.analyzedAt}, ${g.commits} commit(s) kept`,
      ),
    ].join('\n');
  }
  if (out.action === 'health') {
    const cycles = (out.cycles ?? [])
      .slice(0, 10)
      .map((c, i) => `  ${i + 1}. (${c.length}) ${c.slice(0, 8).join(' → ')}${c.length > 8 ? ' …' : ''}`);
    return [out.message, ...cycles].join('\n');
  }
  return out.message;
}
