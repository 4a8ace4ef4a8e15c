import { commitsByPrefix } from '../../db/queries/commit-lookup.js';
import { AppError, notFound, validationError } from '../../errors.js';
import type { Context } from '../context.js';
import { listGraphs, type GraphSummary } from './graphs.js';
import type { Provenance } from './model.js';
import { iso } from '../iso-date.js';

/** The graph and commit a DevLens tool answers from, with what a stale answer needs to show. */
export interface ResolvedGraph {
  graphId: string;
  repo: string;
  commitHash: string;
  analyzedAt: string;
  uploadedAt: string;
  /** The commit asked for is not the graph's latest. */
  latest: boolean;
}

export function provenanceOf(g: ResolvedGraph): Provenance {
  return {
    source: 'commit',
    graphId: g.graphId,
    repo: g.repo,
    commitHash: g.commitHash,
    analyzedAt: g.analyzedAt,
    uploadedAt: g.uploadedAt,
    hasGit: true,
  };
}

/** `a/b//` → `a/b`. A loop, not `/\/+$/`: that regex ran to the end of the text from every `/` in it (quadratic in a run of slashes). */
function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--;
  return path.slice(0, end);
}

/** A name, graphId, or path whose last part(s) are the repo (`/home/dev/ky`, `org/ky`), any case. */
function matches(g: GraphSummary, wanted: string): boolean {
  if (g.graphId === wanted) return true;
  const name = g.repo.toLowerCase();
  const w = withoutTrailingSlashes(wanted.toLowerCase().replace(/\\/g, '/'));
  return w === name || w.endsWith(`/${name}`) || name.endsWith(`/${w}`);
}

function describe(graphs: GraphSummary[]): string {
  return graphs.map((g) => `${g.repo} (${g.graphId})`).join(', ');
}

/**
 * Which graph a DevLens tool reads (design.md §7): the `repo` argument (name, graphId or path
 * suffix), else the session's default (`?repo=` / `X-Repo`), else the only graph; otherwise a clear
 * error listing the repos. The commit is `commitHash` (a full hash or a prefix of 7+ characters)
 * or the graph's latest.
 */
export async function resolveGraph(
  ctx: Pick<Context, 'db' | 'defaultRepo' | 'caller'>,
  repo?: string,
  commitHash?: string,
): Promise<ResolvedGraph> {
  const { graphs } = await listGraphs(ctx);
  const uploaded = graphs.filter((g) => g.latestCommit !== null);
  if (uploaded.length === 0) {
    throw notFound(
      'No code graph has been uploaded yet: run the analyzer and upload its output (POST /api/v1/graphs, or `devstream-hub upload`).',
      {
        repos: [],
      },
    );
  }
  const wanted = repo ?? ctx.defaultRepo;
  let graph: GraphSummary | undefined;
  if (wanted !== undefined) {
    const found = uploaded.filter((g) => matches(g, wanted));
    if (found.length === 0) {
      throw notFound(`repo: no code graph matches "${wanted}"; uploaded: ${describe(uploaded)}`, {
        repos: uploaded.map((g) => g.repo),
      });
    }
    // An exact name or id beats a path-suffix match.
    graph =
      found.find((g) => g.graphId === wanted || g.repo.toLowerCase() === wanted.toLowerCase()) ??
      (found.length === 1 ? found[0] : undefined);
    if (!graph)
      throw validationError([
        { field: 'repo', message: `"${wanted}" matches several graphs: ${describe(found)}; name one` },
      ]);
  } else if (uploaded.length === 1) {
    graph = uploaded[0]!;
  } else {
    throw validationError([
      {
        field: 'repo',
        message: `several code graphs are uploaded; name one with the repo argument, ?repo= on the MCP URL or an X-Repo header: ${describe(uploaded)}`,
      },
    ]);
  }

  if (commitHash === undefined || commitHash === graph.latestCommit) {
    return {
      graphId: graph.graphId,
      repo: graph.repo,
      commitHash: graph.latestCommit!,
      analyzedAt: graph.analyzedAt!,
      uploadedAt: graph.uploadedAt!,
      latest: true,
    };
  }
  if (commitHash.length < 7)
    throw validationError([
      { field: 'commitHash', message: 'must be a commit hash or a prefix of at least 7 characters' },
    ]);
  const rows = await commitsByPrefix(ctx.db, graph.graphId, commitHash);
  const exact = rows.find((r) => r.commit_hash === commitHash);
  if (!exact && rows.length > 1) {
    throw validationError([
      {
        field: 'commitHash',
        message: `"${commitHash}" matches several commits of ${graph.repo}; give more of the hash`,
      },
    ]);
  }
  const row = exact ?? rows[0];
  if (!row) {
    throw new AppError(
      'NOT_FOUND',
      `commitHash: ${graph.repo} has no uploaded commit "${commitHash}" (latest: ${graph.latestCommit})`,
      {
        details: { repo: graph.repo, latestCommit: graph.latestCommit },
      },
    );
  }
  return {
    graphId: graph.graphId,
    repo: graph.repo,
    commitHash: row.commit_hash,
    analyzedAt: iso(row.analyzed_at),
    uploadedAt: iso(row.uploaded_at),
    latest: false,
  };
}
