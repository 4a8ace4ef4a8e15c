/**
 * For the code-question probes (bench/context-misses.ts, bench/research/*): a bench:context question
 * as its file holds it, and a checkout analyzed by our analyzer and uploaded to a service, as
 * bench:context does it (gzipped, POST /api/v1/graphs).
 */
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { gzipSync } from 'node:zlib';
import { analyzeRepository } from '../../src/analyzer/analyze-repository.js';
import { commitFileStream } from '../../src/analyzer/commit-file-json.js';

/** One question of bench/context/questions/<repo>.json (the fields the probes read). */
export interface ContextQuestion {
  id: string;
  question: string;
  category: string;
  intent: string;
  gold: string[];
}

/** Analyzes `checkouts/<repo>` and uploads its graph as `repo` to the service at `serviceUrl`; returns the commit file. */
export async function uploadCheckout(serviceUrl: string, checkouts: string, repo: string) {
  const commit = await analyzeRepository(join(checkouts, repo));
  const response = await fetch(`${serviceUrl}/api/v1/graphs?repo=${encodeURIComponent(repo)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync(await buffer(commitFileStream(commit))),
  });
  if (response.status !== 201) throw new Error(`upload ${repo}: ${response.status} ${await response.text()}`);
  return commit;
}
