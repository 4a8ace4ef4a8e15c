import { basename } from 'node:path/posix';
import { findPlanByTitle } from '../../db/queries/plans.js';
import { AppError } from '../../errors.js';
import { trimChars } from '../text-scan.js';
import type { Context } from '../context.js';
import { listGraphs } from '../graphs/graphs.js';
import { resolveGraph, type ResolvedGraph } from '../graphs/resolve-graph.js';
import { defaultProjectFor, maySeeProject } from '../visibility.js';

/** Where a hook's project and graph came from, for the answer's first line. */
export interface HookScope {
  /** The project's title as stored, or the default project's name when nothing matched. */
  project: string;
  /** Whether the project exists and the caller may see it (a hook never creates one). */
  projectExists: boolean;
  /** The code graph, when one was named or the working folder's name matches one. */
  graph: ResolvedGraph | undefined;
}

/** The last folder name of a working folder, POSIX or Windows. */
export function folderName(cwd: string | undefined): string | undefined {
  if (!cwd) return undefined;
  const name = basename(trimChars(cwd.replace(/\\/g, '/'), '', '/'));
  return name || undefined;
}

/**
 * The project and code graph a hook is about: `?project=` / `?repo=` on the URL (or `X-Repo`),
 * else the working folder's last name matched case-insensitively to a project or a graph; the
 * default project when no project matches (where memories stored without a project go). A project
 * the caller may not see is as good as absent (no context from it); a caller limited to projects
 * falls back to its default (defaultProjectFor), or to none: then nothing is given.
 */
export async function hookScope(
  ctx: Pick<Context, 'db' | 'caller' | 'defaultProject' | 'defaultRepo'>,
  named: { project?: string | undefined; repo?: string | undefined; cwd?: string | undefined },
): Promise<HookScope> {
  const folder = folderName(named.cwd);
  const wantedProject = named.project ?? folder;
  const visiblePlan = async (title: string | undefined) => {
    const plan = title === undefined ? undefined : await findPlanByTitle(ctx.db, title);
    return plan && maySeeProject(ctx.caller, plan.title) ? plan : undefined;
  };
  const [plan, graph] = await Promise.all([
    visiblePlan(wantedProject),
    findGraph(ctx, named.repo ?? ctx.defaultRepo, folder),
  ]);
  if (plan) return { project: plan.title, projectExists: true, graph };
  if (named.project !== undefined) return { project: named.project, projectExists: false, graph };
  const defaultProject = defaultProjectFor(ctx.caller, ctx.defaultProject);
  const fallback = await visiblePlan(defaultProject);
  return {
    project: fallback?.title ?? defaultProject ?? ctx.defaultProject,
    projectExists: fallback !== undefined,
    graph,
  };
}

/** The graph named (an unknown name: none), or the one named like the working folder. */
async function findGraph(
  ctx: Pick<Context, 'db' | 'caller' | 'defaultRepo'>,
  repo: string | undefined,
  folder: string | undefined,
): Promise<ResolvedGraph | undefined> {
  if (repo !== undefined) return resolveGraph(ctx, repo).catch(noGraph);
  if (folder === undefined) return undefined;
  const lower = folder.toLowerCase();
  const match = (await listGraphs(ctx)).graphs.find((g) => g.latestCommit !== null && g.repo.toLowerCase() === lower);
  return match ? resolveGraph(ctx, match.graphId).catch(noGraph) : undefined;
}

/** A name that matches no graph, or several: no graph (a database failure still throws). */
function noGraph(error: unknown): undefined {
  if (error instanceof AppError && (error.code === 'NOT_FOUND' || error.code === 'VALIDATION_ERROR')) return undefined;
  throw error;
}
