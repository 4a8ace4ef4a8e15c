import type { GraphNode } from '../commit-file.js';
import { MAX_CODE_HASHES as BATCH } from '../domain/graphs/known-summaries.js';
import { codeHashOf, knownFromStored, type KnownSummary, type StoredSummary } from '../analyzer/summarize.js';

/**
 * The model-written summaries the server already stores for the code of `nodes` (its latest commit
 * of `repo`), by code hash, as `--previous` gives them from a file: what `analyze --summarize
 * --upload` need not ask its model about. Asks `POST <url>/api/v1/graphs/summaries` with the nodes'
 * code hashes, in batches. Resolves to the summaries and the commit they come from, or to why they
 * could not be read (the caller goes on without them: the model is asked about every node).
 */
export async function serverSummaries(options: {
  url: string;
  repo: string;
  token: string | undefined;
  nodes: readonly GraphNode[];
}): Promise<{ known: Map<string, KnownSummary>; commitHash: string | null } | { problem: string }> {
  const hashes = [...new Set(options.nodes.map((n) => codeHashOf(n)).filter((h): h is string => h !== undefined))];
  const base = new URL(options.url);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  const endpoint = new URL('api/v1/graphs/summaries', base);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const found: StoredSummary[] = [];
  let commitHash: string | null = null;
  for (let start = 0; start < hashes.length; start += BATCH) {
    let response: Response;
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({ repo: options.repo, codeHashes: hashes.slice(start, start + BATCH) }),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      return { problem: `could not reach ${options.url}${cause?.code ? ` (${cause.code})` : ''}` };
    }
    const answer = (await response.json().catch(() => null)) as {
      commitHash?: string | null;
      summaries?: StoredSummary[];
      error?: { code: string; message: string };
    } | null;
    if (!response.ok || !Array.isArray(answer?.summaries))
      return {
        problem: `${response.status}${answer?.error ? ` ${answer.error.code}: ${answer.error.message}` : ''}`,
      };
    found.push(...answer.summaries);
    commitHash ??= answer.commitHash ?? null;
  }
  const known = knownFromStored(found);
  return { known, commitHash };
}
