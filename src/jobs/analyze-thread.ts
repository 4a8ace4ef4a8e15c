/**
 * Worker-thread entry of an `analyze` job: the analysis is CPU-bound and synchronous for long
 * stretches (the TypeScript checker), so it runs off the service's event loop. Writes the commit
 * file to `out` and reports progress (at most twice a second) and the outcome to the parent.
 */
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { analyzeRepository } from '../analyzer/analyze-repository.js';
import { commitFileStream } from '../analyzer/commit-file-json.js';
import type { AnalysisProgress } from '../analyzer/progress.js';
import type { ThreadInput, ThreadMessage } from './analyze-job.js';

const input = workerData as ThreadInput;
const post = (message: ThreadMessage) => parentPort!.postMessage(message);
/** Posts progress at most twice a second, and always the end ('done'). */
const throttledProgress = () => {
  let last = 0;
  return (progress: AnalysisProgress) => {
    const now = Date.now();
    if (now - last < 500 && progress.phase !== 'done') return;
    last = now;
    post({ type: 'progress', progress: { ...progress } });
  };
};
const commit = await analyzeRepository(input.path, {
  ...(input.include ? { include: input.include } : {}),
  ...(input.exclude ? { exclude: input.exclude } : {}),
  onProgress: throttledProgress(),
});
await pipeline(commitFileStream(commit), createWriteStream(input.out));
post({ type: 'done', commitHash: commit.commitHash, nodes: commit.nodes.length, edges: commit.edges.length });
