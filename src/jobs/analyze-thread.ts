/**
 * Worker-thread entry of an `analyze` job: the analysis is CPU-bound and synchronous for long
 * stretches (the TypeScript checker), so it runs off the service's event loop. With `summarize`,
 * then asks the chat model for the symbols' summaries. Writes the commit file to `out` and reports
 * progress (at most twice a second, and at each new phase) and the outcome to the parent.
 */
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { analyzeRepository } from '../analyzer/analyze-repository.js';
import { commitFileStream } from '../analyzer/commit-file-json.js';
import { summarizeCommit } from '../analyzer/summarize.js';
import type { JobProgress, SummariesOutcome, ThreadInput, ThreadMessage } from './analyze-job.js';

const input = workerData as ThreadInput;
const post = (message: ThreadMessage) => parentPort!.postMessage(message);
const started = performance.now();
/** Posts progress at most twice a second, and always a new phase, the analysis's end and the last node summarized. */
const progress = (() => {
  let last = 0;
  let phase = '';
  return (next: JobProgress) => {
    const now = Date.now();
    const final = next.phase === 'done' || (next.phase === 'summarizing' && next.done === next.total);
    if (now - last < 500 && next.phase === phase && !final) return;
    last = now;
    phase = next.phase;
    post({ type: 'progress', progress: { ...next } });
  };
})();
const commit = await analyzeRepository(input.path, {
  ...(input.include ? { include: input.include } : {}),
  ...(input.exclude ? { exclude: input.exclude } : {}),
  onProgress: progress,
});
let summaries: SummariesOutcome | undefined;
if (input.summarize) {
  const { model, host, concurrency, timeoutMs, known } = input.summarize;
  const elapsedMs = () => Math.round(performance.now() - started);
  const summarizing = (p: { done: number; total: number; asked: number; reused: number; failed: number }) =>
    progress({ phase: 'summarizing', model, ...p, elapsedMs: elapsedMs() });
  const result = await summarizeCommit(commit, { host, model, concurrency, timeoutMs, known, onProgress: summarizing });
  const { total, asked, answered, reused, failed, gaveUp } = result;
  summaries = { model, total, asked, answered, reused, failed, ...(gaveUp ? { gaveUp } : {}) };
}
await pipeline(commitFileStream(commit), createWriteStream(input.out));
post({
  type: 'done',
  commitHash: commit.commitHash,
  nodes: commit.nodes.length,
  edges: commit.edges.length,
  ...(summaries ? { summaries } : {}),
});
