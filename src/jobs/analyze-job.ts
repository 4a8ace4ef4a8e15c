import { createReadStream } from 'node:fs';
import { mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { AnalysisProgress } from '../analyzer/progress.js';
import { analyzeGraphTables } from '../db/queries/graphs/ingest.js';
import type { Database } from '../db/schema.js';
import type { Logger } from '../domain/context.js';
import { uploadGraph } from '../domain/graphs/upload-graph.js';
import { AppError, validationError } from '../errors.js';
import type { JobHandler } from './job-runner.js';

/** What an `analyze` job is given (stored as the job's params). */
export const AnalyzeParamsSchema = z.object({
  path: z.string(),
  repo: z.string(),
  branch: z.string().optional(),
});
export type AnalyzeParams = z.output<typeof AnalyzeParamsSchema>;

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

const within = (path: string, root: string) => {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
};

/**
 * The folder `path` names, if the server may analyze it: an absolute path inside one of `roots`
 * (ANALYZE_ROOTS), before and after symbolic links are followed. Nothing outside the roots is
 * looked at, so a refusal tells nothing about what exists there.
 */
export async function analyzablePath(path: string, roots: readonly string[]): Promise<string> {
  if (roots.length === 0) {
    throw new AppError(
      'FORBIDDEN',
      'path: this server analyzes no folders (ANALYZE_ROOTS is unset). Run `devstream-hub analyze <folder> --upload <server>` where the code is.',
    );
  }
  if (!isAbsolute(path)) throw validationError([{ field: 'path', message: 'must be an absolute path on the server' }]);
  const outside = () =>
    new AppError('FORBIDDEN', `path: ${path} is outside the folders this server may analyze (ANALYZE_ROOTS)`);
  const lexical = resolve(path);
  const root = roots.find((r) => within(lexical, resolve(r)));
  if (root === undefined) throw outside();
  const real = await realpath(lexical).catch(() => null);
  if (real === null || !(await stat(real)).isDirectory())
    throw validationError([{ field: 'path', message: `${path} is not a folder on the server` }]);
  const realRoot = await realpath(root).catch(() => resolve(root));
  if (!within(real, realRoot)) throw outside();
  return real;
}

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
        { db: deps.db, caller: { name: job.created_by, scopes: new Set(['write']) }, retention: deps.retention },
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
