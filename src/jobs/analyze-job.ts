import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Kysely } from 'kysely';
import type { AnalysisProgress } from '../analyzer/progress.js';
import { analyzeGraphTables } from '../db/queries/graphs/ingest.js';
import type { Database } from '../db/schema.js';
import type { Logger } from '../logger.js';
import { analyzablePath, AnalyzeParamsSchema } from '../domain/analyze-params.js';
import { uploadGraph, type NodeVectorQueue } from '../domain/graphs/upload-graph.js';
import type { JobHandler } from './job-runner.js';

/** The worker thread's input and messages (see analyze-thread.ts). */
export interface ThreadInput {
  path: string;
  include?: string[];
  exclude?: string[];
  /** Where to write the commit file. */
  out: string;
}
export type ThreadMessage =
  { type: 'progress'; progress: AnalysisProgress } | { type: 'done'; commitHash: string; nodes: number; edges: number };

/**
 * A worker thread running analyze-thread, next to this module. Built, that is a .js file; run from
 * source under tsx, the thread must register tsx's loader itself before importing the .ts entry
 * (Node 20's workers do not inherit it, not even with `--import tsx` in their execArgv).
 */
function analyzerThread(input: ThreadInput): Worker {
  if (!fileURLToPath(import.meta.url).endsWith('.ts'))
    return new Worker(new URL('./analyze-thread.js', import.meta.url), { workerData: input });
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./analyze-thread.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(boot, { eval: true, workerData: input });
}

/** Runs the analyzer in a worker thread; resolves when the commit file is written. */
function analyzeInThread(
  input: ThreadInput,
  onProgress: (p: AnalysisProgress) => void,
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
 * The `analyze` job: builds the code graph of a folder the server can read (in a worker thread, off
 * the service's event loop) and stores it exactly as an upload of that commit file would.
 */
export function analyzeJob(deps: {
  db: Kysely<Database>;
  analyzeRoots: readonly string[];
  retention: number;
  log: Pick<Logger, 'warn'>;
  /** Where the stored commit's nodes are queued for embedding. */
  nodeVectors?: NodeVectorQueue;
}): JobHandler {
  return async (job, report, signal) => {
    const params = AnalyzeParamsSchema.parse(job.params);
    // Checked again: the roots are this instance's, and the folder may have changed since.
    const path = await analyzablePath(params.path, deps.analyzeRoots);
    const scratch = await mkdtemp(join(tmpdir(), 'dsh-analyze-'));
    try {
      const out = join(scratch, 'commit.json');
      const analysis = await analyzeInThread({ path, out }, (progress) => report({ ...progress }), signal);
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
      return { ...stored };
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  };
}
