import { basename } from 'node:path';
import { z } from 'zod';
import { getJob as findJob, insertJob, type JobRow } from '../db/queries/jobs.js';
import { AppError, notFound } from '../errors.js';
import { analyzablePath, type AnalyzeParams } from './analyze-params.js';
import type { Context } from './context.js';
import { newId } from './ids.js';
import { iso, isoOrNull } from './iso-date.js';
import { maySeeRepo, requireRepo } from './visibility.js';

export const JobSchema = z.object({
  jobId: z.string(),
  kind: z.enum(['analyze']),
  status: z.enum(['queued', 'running', 'succeeded', 'failed']),
  params: z.record(z.string(), z.unknown()),
  progress: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe(
      'analyze: phase (listing, parsing, resolving, done, summarizing, storing), filesDone, filesTotal, elapsedMs; summarizing: model, done, total',
    ),
  result: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe('analyze: the stored graph (graphId, repo, commitHash, nodes, edges, uploadedAt, summaries?)'),
  error: z.string().nullable(),
  attempts: z.number().int(),
  createdBy: z.string().nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
});
export type Job = z.output<typeof JobSchema>;

function present(row: JobRow): Job {
  return {
    jobId: row.id,
    kind: row.kind,
    status: row.status,
    params: row.params,
    progress: row.progress,
    result: row.result,
    error: row.error,
    attempts: row.attempts,
    createdBy: row.created_by,
    createdAt: iso(row.created_at),
    startedAt: isoOrNull(row.started_at),
    finishedAt: isoOrNull(row.finished_at),
  };
}

/**
 * Queues the analysis of a folder the server can read (inside ANALYZE_ROOTS; checked now, and
 * again when the job runs). The graph is stored under `repo`, by default the folder's name: one
 * outside the caller's repos is FORBIDDEN, as its upload would be. `summarize` needs the server's
 * summary model (OLLAMA_SUMMARY_MODEL): without one it is FORBIDDEN, naming the field, and nothing
 * is queued (a graph without the summaries asked for is not what the caller wanted).
 */
export async function queueAnalysis(
  ctx: Pick<Context, 'db' | 'jobs' | 'caller'>,
  input: { path: string; repo?: string | undefined; branch?: string | undefined; summarize?: boolean | undefined },
): Promise<Job> {
  const path = await analyzablePath(input.path, ctx.jobs.analyzeRoots);
  if (input.summarize && !ctx.jobs.summaryModel)
    throw new AppError(
      'FORBIDDEN',
      'summarize: this server has no summary model (OLLAMA_SUMMARY_MODEL is unset). Analyze without summarize, or run ' +
        '`devstream-hub analyze <folder> --summarize --upload <server>` where a chat model is (Ollama, OLLAMA_SUMMARY_MODEL).',
    );
  const repo = input.repo ?? basename(path);
  requireRepo(ctx.caller, repo);
  const params: AnalyzeParams = {
    path,
    repo,
    ...(input.branch ? { branch: input.branch } : {}),
    ...(input.summarize ? { summarize: true } : {}),
  };
  const row = await insertJob(ctx.db, { id: newId(), kind: 'analyze', params, createdBy: ctx.caller.name });
  ctx.jobs.queued();
  return present(row);
}

/** What `devstream_get_job` returns: its MCP outputSchema and its REST body. */
export const GetJobResultSchema = z.object({ job: JobSchema });
export type GetJobResult = z.output<typeof GetJobResultSchema>;

/** One job; NOT_FOUND for a job of a repo the caller may not see, as for none. */
export async function getJob(ctx: Pick<Context, 'db' | 'caller'>, input: { jobId: string }): Promise<GetJobResult> {
  const row = await findJob(ctx.db, input.jobId.toLowerCase());
  const repo = row?.params.repo;
  if (!row || (ctx.caller.repos !== undefined && !(typeof repo === 'string' && maySeeRepo(ctx.caller, repo))))
    throw notFound(`job ${input.jobId} not found`);
  return { job: present(row) };
}

export function renderJob(out: GetJobResult): string {
  const j = out.job;
  const lines = [`Job ${j.jobId} (${j.kind}): ${j.status.toUpperCase()}`];
  if (j.progress && j.status === 'running') lines.push(`Progress: ${JSON.stringify(j.progress)}`);
  if (j.result) lines.push(`Result: ${JSON.stringify(j.result)}`);
  if (j.error) lines.push(`Error: ${j.error}`);
  lines.push(
    `Queued ${j.createdAt}${j.startedAt ? `, started ${j.startedAt}` : ''}${j.finishedAt ? `, finished ${j.finishedAt}` : ''}`,
  );
  return lines.join('\n');
}
