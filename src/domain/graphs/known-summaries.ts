import { z } from 'zod';
import { latestKnownSummaries } from '../../db/queries/graphs/known-summaries.js';
import type { Context } from '../context.js';
import { requireRepo } from '../visibility.js';

/**
 * Code hashes one request may ask about (the analyzer sends more in batches of this size), within
 * the 10,000 values a JSON body may hold (http/json-body.ts).
 */
export const MAX_CODE_HASHES = 5_000;

export const KnownSummariesResultSchema = z.object({
  repo: z.string(),
  commitHash: z.string().nullable().describe('The commit the summaries are stored in (null: none matched)'),
  summaries: z
    .array(
      z.object({
        codeHash: z.string(),
        technicalSummary: z.string().nullable(),
        businessSummary: z.string().nullable(),
        security: z.object({ severity: z.string().nullable(), summary: z.string().nullable() }),
        model: z.string().nullable(),
      }),
    )
    .describe('One per code hash asked about that has summaries written by a model'),
});
export type KnownSummariesResult = z.output<typeof KnownSummariesResultSchema>;

/**
 * The model-written summaries the latest stored commit of `repo` has for code of the given hashes
 * (SHA-256 of a node's code, as `analyze` writes `codeHash`): what `analyze --summarize --upload`
 * reuses instead of asking the model about unchanged code. A repo without a graph has none; a repo
 * outside the caller's is FORBIDDEN, as its upload would be.
 */
export async function knownSummaries(
  ctx: Pick<Context, 'db' | 'caller'>,
  input: { repo: string; codeHashes: string[] },
): Promise<KnownSummariesResult> {
  requireRepo(ctx.caller, input.repo);
  const rows = input.codeHashes.length === 0 ? [] : await latestKnownSummaries(ctx.db, input.repo, input.codeHashes);
  const byHash = new Map<string, KnownSummariesResult['summaries'][number]>();
  for (const row of rows)
    if (!byHash.has(row.code_hash))
      byHash.set(row.code_hash, {
        codeHash: row.code_hash,
        technicalSummary: row.technical_summary,
        businessSummary: row.business_summary,
        security: { severity: row.security_severity, summary: row.security_summary },
        model: row.model,
      });
  return { repo: input.repo, commitHash: rows[0]?.commit_hash ?? null, summaries: [...byHash.values()] };
}
