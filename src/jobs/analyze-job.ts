import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Kysely } from 'kysely';
import type { AnalysisProgress } from '../analyzer/progress.js';
import { knownFromStored, type KnownSummary, type SummarizeProgress } from '../analyzer/summarize.js';
import { analyzeGraphTables } from '../db/queries/graphs/ingest.js';
import { latestKnownSummaries } from '../db/queries/graphs/known-summaries.js';
import type { Database } from '../db/schema.js';
import type { Logger } from '../logger.js';
import { analyzablePath, AnalyzeParamsSchema } from '../domain/analyze-params.js';
import { uploadGraph, type NodeVectorQueue } from '../domain/graphs/upload-graph.js';
import type { JobHandler } from './job-runner.js';

/** The server's summary model (OLLAMA_SUMMARY_MODEL at OLLAMA_HOST); no model: no summaries. */
export interface SummarySettings {
  model: string | undefined;
  ollamaHost: string;
  concurrency: number;
  timeoutMs: number;
}

/** What the thread summarizes with: the model, and the summaries it need not ask for (by code hash). */
export interface ThreadSummarize {
  host: string;
  model: string;
  concurrency: number;
  timeoutMs: number;
  known: Map<string, KnownSummary>;
}

/** An analysis job's progress: the analyzer's phases, then the model's. */
export type JobProgress =
  AnalysisProgress | ({ phase: 'summarizing'; model: string; elapsedMs: number } & SummarizeProgress);

/** What the job's result says of its summaries (`gaveUp`: why the model was not, or no longer, asked). */
export interface SummariesOutcome {
  model: string | null;
  total: number;
  asked: number;
  answered: number;
  reused: number;
  failed: number;
  gaveUp?: string;
}

/** The worker thread's input and messages (see analyze-thread.ts). */
export interface ThreadInput {
  path: string;
  include?: string[];
  exclude?: string[];
  /** Where to write the commit file. */
  out: string;
  summarize?: ThreadSummarize;
}
export type ThreadMessage =
  | { type: 'progress'; progress: JobProgress }
  | { type: 'done'; commitHash: string; nodes: number; edges: number; summaries?: SummariesOutcome };

/**
 * A worker thread running analyze-thread, next to this module: a .js file when built (dist/) or
 * transpiled (`npm start`, `npm test`: scripts/transpile.js, whose copies keep the .ts file's
 * import.meta.url, so the entry is resolved, not derived from it). Run from source under tsx, the
 * thread must register tsx's loader itself before importing the .ts entry (Node 20's workers do not
 * inherit it, not even with `--import tsx` in their execArgv).
 */
function analyzerThread(input: ThreadInput): Worker {
  const entry = import.meta.resolve('./analyze-thread.js');
  if (!entry.endsWith('.ts')) return new Worker(new URL(entry), { workerData: input });
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(boot, { eval: true, workerData: input });
}

/** Runs the analyzer in a worker thread; resolves when the commit file is written. */
function analyzeInThread(
  input: ThreadInput,
  onProgress: (p: JobProgress) => void,
  signal: AbortSignal,
): Promise<Extract<ThreadMessage, { type: 'done' }>> {
  return new Promise((resolvePromise, reject) => {
    const worker = analyzerThread(input);
    let done: Extract<ThreadMessage, { type: 'done' }> | null = null;
    let failure: Error | null = null;
    const stop = () => void worker.terminate();
    signal.addEventListener('abort', stop, { once: true });
    worker.on('message', (message: ThreadMessage) => {
      if (message.type === 'progress') onProgress(message.progress);
      else done = message;
    });
    worker.on('error', (error) => {
      failure = error;
    });
    worker.on('exit', (code) => {
      signal.removeEventListener('abort', stop);
      if (done) resolvePromise(done);
      else if (signal.aborted) reject(new Error('analysis stopped'));
      else reject(failure ?? new Error(`the analyzer stopped (exit code ${code})`));
    });
  });
}

/**
 * What a job with `summarize` gives its thread: the model, and the model-written summaries of the
 * repo's latest stored commit by code hash, so that unchanged code is not asked about again (a
 * re-run of the same commit asks nothing). Undefined when this instance has no summary model.
 */
async function summarizeInput(
  db: Kysely<Database>,
  settings: SummarySettings,
  repo: string,
): Promise<ThreadSummarize | undefined> {
  if (!settings.model) return undefined;
  const rows = await latestKnownSummaries(db, repo);
  const known = knownFromStored(
    rows.map((r) => ({
      codeHash: r.code_hash,
      technicalSummary: r.technical_summary,
      businessSummary: r.business_summary,
      security: { severity: r.security_severity, summary: r.security_summary },
      model: r.model,
    })),
  );
  const { model, ollamaHost: host, concurrency, timeoutMs } = settings;
  return { host, model, concurrency, timeoutMs, known };
}

/** A job's summaries when its instance has no model (the job was queued on one that had). */
const NO_MODEL: SummariesOutcome = {
  model: null,
  total: 0,
  asked: 0,
  answered: 0,
  reused: 0,
  failed: 0,
  gaveUp: 'the instance that ran the job has no summary model (OLLAMA_SUMMARY_MODEL is unset)',
};

/**
 * The `analyze` job: builds the code graph of a folder the server can read (in a worker thread, off
 * the service's event loop), with `summarize` also each symbol's summaries from the server's chat
 * model (as `analyze --summarize` writes them; a model that fails or is down leaves doc comments,
 * never fails the job), and stores it exactly as an upload of that commit file would.
 */
export function analyzeJob(deps: {
  db: Kysely<Database>;
  analyzeRoots: readonly string[];
  retention: number;
  summaries: SummarySettings;
  log: Pick<Logger, 'warn'>;
  /** Where the stored commit's nodes are queued for embedding. */
  nodeVectors?: NodeVectorQueue;
}): JobHandler {
  return async (job, report, signal) => {
    const params = AnalyzeParamsSchema.parse(job.params);
    // Checked again: the roots are this instance's, and the folder may have changed since.
    const path = await analyzablePath(params.path, deps.analyzeRoots);
    const summarize = params.summarize ? await summarizeInput(deps.db, deps.summaries, params.repo) : undefined;
    const scratch = await mkdtemp(join(tmpdir(), 'dsh-analyze-'));
    try {
      const out = join(scratch, 'commit.json');
      const analysis = await analyzeInThread(
        { path, out, ...(summarize ? { summarize } : {}) },
        (progress) => report({ ...progress }),
        signal,
      );
      report({ phase: 'storing', nodes: analysis.nodes, edges: analysis.edges });
      const stored = await uploadGraph(
        {
          db: deps.db,
          caller: { name: job.created_by, scopes: new Set(['write']) },
          retention: deps.retention,
          ...(deps.nodeVectors ? { nodeVectors: deps.nodeVectors } : {}),
        },
        { repo: params.repo, ...(params.branch ? { branch: params.branch } : {}) },
        [createReadStream(out)],
      );
      await analyzeGraphTables(deps.db).catch((error: unknown) =>
        deps.log.warn({ err: error }, 'analyze after graph upload failed'),
      );
      const summaries = params.summarize ? (analysis.summaries ?? NO_MODEL) : undefined;
      return { ...stored, ...(summaries ? { summaries } : {}) };
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  };
}
