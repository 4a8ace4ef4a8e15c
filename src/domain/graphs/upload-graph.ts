import { createHash } from 'node:crypto';
import type { Duplex, Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { notifyChange } from '../../db/change-events.js';
import { findGraph } from '../../db/queries/graphs/catalogue.js';
import { maySeeRepo, requireRepo } from '../visibility.js';
import {
  applyNodeScores,
  applyRetention,
  finishCommit,
  insertEdges,
  insertNodes,
  lockCommit,
  previousCommit,
  replaceCommit,
  upsertGraph,
} from '../../db/queries/graphs/ingest.js';
import { queueCommitNodes } from '../../db/queries/graphs/node-embedding-jobs.js';
import type { Database } from '../../db/schema.js';
import type { Embedder } from '../../embeddings/embedder.js';
import type { Logger } from '../../logger.js';
import { AppError, validationError } from '../../errors.js';
import { graphId as graphIdField, name, unstorable } from '../fields.js';
import { toFieldIssues } from '../field-issues.js';
import type { Caller } from '../../auth/scopes.js';
import { mapYielding } from '../map-yielding.js';
import { CommitFileFormatError, CommitFileLimitError, sizeText } from './commit-file-limits.js';
import { readCommitFile } from './commit-file-reader.js';
import { ELEMENT_ARRAYS, FILE_FIELDS, holdsNodes, type ElementArray } from '../../commit-file.js';
import { edgeRow } from './edge-row.js';
import { nodeRow } from './node-row.js';
import { carryOverSummaries } from './summary-carry-over.js';
import { bad, checkValue } from './upload-checks.js';
import { MAX_EARLY_SCORES, NODE_SCORES_PER_NODE, NODE_SCORES_SLACK, UPLOAD_LIMITS } from './upload-limits.js';
import { iso } from '../iso-date.js';

/** The query string of `POST /api/v1/graphs`. */
export const UploadQuerySchema = z.strictObject({
  repo: name('repo').describe('Repository name: the graph is found by it (any case) from then on'),
  graphId: graphIdField
    .optional()
    .describe("The graph's id (default: the existing graph of this repo, else a hash of its name)"),
  commit: name('commit', 100).optional().describe("Commit hash (default: the file's commitHash)"),
  branch: name('branch').optional().describe('Branch the commit is on'),
});
export type UploadQuery = z.output<typeof UploadQuerySchema>;

export const UploadResultSchema = z.object({
  graphId: z.string(),
  repo: z.string(),
  commitHash: z.string(),
  nodes: z.number().int().describe('Nodes stored (repeated ids count once per copy)'),
  edges: z.number().int(),
  summariesKept: z
    .number()
    .int()
    .describe("Nodes without a model's summaries that kept the previous commit's (same id, same code)"),
  uploadedAt: z.string(),
});
export type UploadResult = z.output<typeof UploadResultSchema>;

/** A graph id for a new repo: stable, so the same name always gets the same id. */
export function graphIdFor(repo: string): string {
  return createHash('sha256').update(repo.toLowerCase()).digest('hex').slice(0, 16);
}

export interface UploadDeps {
  db: Kysely<Database>;
  caller: Caller;
  retention: number;
  /** Where the commit's nodes are queued for embedding once it is stored (absent: they are not). */
  nodeVectors?: NodeVectorQueue;
}

/** The embedding worker as an upload sees it: whether it embeds at all, and how to wake it. */
export interface NodeVectorQueue {
  embedder: Pick<Embedder, 'enabled'>;
  /** The commit's nodes were queued: wake the worker. */
  queued(): void;
  log: Pick<Logger, 'warn'>;
}

/**
 * Stores one commit of a repo's code graph from a DevLens commit file, read as a stream (`body`:
 * the source and its transforms, see readCommitFile): in one
 * transaction, so a failed or invalid upload stores nothing and a re-upload of the commit replaces
 * it whole. Older commits past the retention are dropped. Once it is committed, its nodes are queued
 * for embedding (when an embedder is configured); that never fails the upload.
 */
export async function uploadGraph(
  deps: UploadDeps,
  rawQuery: unknown,
  body: Array<Readable | Duplex>,
): Promise<UploadResult> {
  const parsed = UploadQuerySchema.safeParse(rawQuery ?? {});
  if (!parsed.success) throw validationError(toFieldIssues(parsed.error));
  const query = parsed.data;
  requireRepo(deps.caller, query.repo);

  // Graphs of repos the caller may not see are not named to it, even in a conflict.
  const existing = (await findGraph(deps.db, { repo: query.repo, graphId: query.graphId })).filter((g) =>
    maySeeRepo(deps.caller, g.repo),
  );
  const byRepo = existing.find((g) => g.repo.toLowerCase() === query.repo.toLowerCase());
  if (query.graphId !== undefined && existing.some((g) => g.graph_id === query.graphId && g !== byRepo)) {
    throw new AppError('CONFLICT', `graphId "${query.graphId}" belongs to another repo`, {
      details: { graphs: existing },
    });
  }
  if (query.graphId !== undefined && byRepo && byRepo.graph_id !== query.graphId) {
    throw new AppError('CONFLICT', `repo "${query.repo}" already has graph "${byRepo.graph_id}"`, {
      details: { graphs: existing },
    });
  }
  const wantedId = byRepo?.graph_id ?? query.graphId ?? graphIdFor(query.repo);

  const stored = await storeCommit(deps, query, wantedId, body);
  if (deps.nodeVectors?.embedder.enabled) await queueNodeVectors(deps.db, deps.nodeVectors, stored);
  return stored;
}

/**
 * Queues the stored commit's nodes for the embedding worker. A failure (the database went away
 * after the commit) is logged, not raised: the upload is stored, and the worker's next start queues
 * the nodes of the latest commits that lack vectors.
 */
async function queueNodeVectors(db: Kysely<Database>, queue: NodeVectorQueue, stored: UploadResult): Promise<void> {
  try {
    const queued = await queueCommitNodes(db, { graphId: stored.graphId, commitHash: stored.commitHash });
    if (queued > 0) queue.queued();
  } catch (error) {
    queue.log.warn(
      { err: error, graphId: stored.graphId, commit: stored.commitHash },
      'could not queue the uploaded nodes for embedding',
    );
  }
}

async function storeCommit(
  deps: UploadDeps,
  query: UploadQuery,
  wantedId: string,
  body: Array<Readable | Duplex>,
): Promise<UploadResult> {
  return deps.db.transaction().execute(async (trx) => {
    let commitHash: string | null = query.commit ?? null;
    let analyzedAt: Date | null = null;
    let stats: unknown;
    /** nodeScores read before the nodes were stored, applied at the end; later ones are applied batch by batch. */
    let earlyScores: Array<[string, number]> = [];
    let earlyScoreChars = 0;
    let scoreCount = 0;
    let nodesStored = false;
    const extra: Record<string, unknown> = {};
    let graph: { graph_id: string; repo: string } | null = null;
    /** The commit this upload follows: unchanged nodes keep its model-written summaries. */
    let previous: string | undefined;
    const counts = { nodes: 0, edges: 0, summariesCarried: 0 };
    let unscored = false;
    /** Which array the nodes (edges) come from: `nodes`, or `allNodes` when the file has no `nodes`. */
    const source: { nodes: ElementArray | null; edges: ElementArray | null } = { nodes: null, edges: null };

    const begin = async () => {
      if (graph) return;
      if (commitHash === null)
        throw bad('commitHash', 'the file must give its commitHash before its nodes, or pass ?commit=');
      graph = await upsertGraph(trx, {
        graphId: wantedId,
        repo: query.repo,
        branch: query.branch ?? null,
        createdBy: deps.caller.name,
      });
      await lockCommit(trx, graph.graph_id, commitHash);
      previous = await previousCommit(trx, graph.graph_id, commitHash);
      await replaceCommit(trx, {
        graphId: graph.graph_id,
        commitHash,
        branch: query.branch ?? null,
        analyzedAt: analyzedAt ?? new Date(),
        createdBy: deps.caller.name,
      });
    };

    /** Scores are applied row by row: no more of them than the graph could use (a bound on the work). */
    const checkScoreCount = () => {
      const most = NODE_SCORES_PER_NODE * counts.nodes + NODE_SCORES_SLACK;
      if (scoreCount > most)
        throw bad(
          'nodeScores',
          `has more than ${most} entries (${NODE_SCORES_PER_NODE} per node of the file, plus ${NODE_SCORES_SLACK})`,
        );
    };

    try {
      await readCommitFile(
        body,
        {
          field(key, value) {
            const problem = unstorable(key);
            if (problem) throw bad('(body)', `key ${JSON.stringify(key)}: ${problem}`);
            checkValue(value, key);
            if (key === 'commitHash') {
              if (typeof value !== 'string' || value.trim() === '' || value.length > 100 || value.includes('\0')) {
                throw bad('commitHash', 'must be a non-empty string of at most 100 characters');
              }
              commitHash ??= value.trim();
            } else if (key === 'analyzedAt') {
              const at = typeof value === 'string' || typeof value === 'number' ? new Date(value) : null;
              if (at === null || Number.isNaN(at.getTime())) throw bad('analyzedAt', 'must be an ISO 8601 date-time');
              // Postgres keeps 4713 BC to 294276 AD; an analysis is of this era.
              if (at.getUTCFullYear() < 1 || at.getUTCFullYear() > 9999)
                throw bad('analyzedAt', 'must be a date-time of the years 1 to 9999');
              analyzedAt = at;
            } else if (key === 'stats') {
              stats = value;
            } else if (key === 'nodeScores') {
              // Not an object (an object arrives entry by entry): ignored, as before.
            } else if ((ELEMENT_ARRAYS as readonly string[]).includes(key)) {
              // Not an array where an array of elements belongs (an array arrives element by element).
              if (value !== null) throw bad(key, 'must be an array');
            } else if (!(FILE_FIELDS as readonly string[]).includes(key)) {
              extra[key] = value;
            }
          },
          async entries(_field, _start, entries) {
            for (const [id, score] of entries) {
              const problem = unstorable(id);
              if (problem) throw bad('nodeScores', `key ${JSON.stringify(id)}: ${problem}`);
              if (typeof score !== 'number' || !Number.isFinite(score))
                throw bad(`nodeScores.${id}`, 'must be a number');
            }
            scoreCount += entries.length;
            if (nodesStored) {
              checkScoreCount();
              if (unscored)
                await applyNodeScores(
                  trx,
                  graph!.graph_id,
                  commitHash!,
                  Object.fromEntries(entries) as Record<string, number>,
                );
              return;
            }
            for (const entry of entries) {
              earlyScoreChars += entry[0].length + 16;
              if (earlyScoreChars > MAX_EARLY_SCORES) {
                throw bad(
                  'nodeScores',
                  `before the nodes, at most ${sizeText(MAX_EARLY_SCORES)} of it is held until they are stored: send nodeScores after the nodes (as DevLens writes it)`,
                );
              }
              earlyScores.push(entry as [string, number]);
            }
          },
          arrayEnd(array) {
            if (array === source.nodes) nodesStored = true;
          },
          async elements(array, start, values) {
            const kind = holdsNodes(array) ? 'nodes' : 'edges';
            // `allNodes` / `allEdges` repeat `nodes` / `edges` in DevLens files: read only when those are missing.
            if (source[kind] === null) source[kind] = array;
            if (source[kind] !== array) return;
            await begin();
            if (kind === 'nodes') {
              if (previous) counts.summariesCarried += await carryOverSummaries(trx, graph!.graph_id, previous, values);
              const rows = await mapYielding(values, (v, i) => nodeRow(v, start + i, `${array}[${start + i}]`));
              unscored ||= rows.some((r) => r.score === null);
              await insertNodes(trx, graph!.graph_id, commitHash!, rows);
              counts.nodes += rows.length;
            } else {
              const rows = await mapYielding(values, (v, i) => edgeRow(v, start + i, `${array}[${start + i}]`));
              await insertEdges(trx, graph!.graph_id, commitHash!, rows);
              counts.edges += rows.length;
            }
          },
        },
        UPLOAD_LIMITS,
      );
    } catch (error) {
      if (error instanceof CommitFileFormatError) throw bad('(body)', error.message);
      if (error instanceof CommitFileLimitError) throw bad(error.field, error.reason);
      throw error;
    }

    if (counts.nodes === 0) throw bad('nodes', 'the graph has no nodes: nothing was stored');
    await begin();
    const g = graph!;
    if (earlyScores.length > 0) {
      checkScoreCount();
      if (unscored)
        await applyNodeScores(trx, g.graph_id, commitHash!, Object.fromEntries(earlyScores) as Record<string, number>);
      earlyScores = [];
    }
    const uploadedAt = await finishCommit(trx, {
      graphId: g.graph_id,
      commitHash: commitHash!,
      analyzedAt: analyzedAt ?? new Date(),
      nodes: counts.nodes,
      edges: counts.edges,
      stats,
      extra: Object.keys(extra).length > 0 ? extra : null,
    });
    await applyRetention(trx, g.graph_id, deps.retention);
    // Every instance hears of the new commit when it commits (search indexes, MCP clients).
    await notifyChange(trx, { type: 'graph-uploaded', graphId: g.graph_id, repo: g.repo, commitHash: commitHash! });
    return {
      graphId: g.graph_id,
      repo: g.repo,
      commitHash: commitHash!,
      nodes: counts.nodes,
      edges: counts.edges,
      summariesKept: counts.summariesCarried,
      uploadedAt: iso(uploadedAt),
    };
  });
}
