import { sql, type Kysely } from 'kysely';
import type { Database } from '../../schema.js';

/** A model-written summary of a stored node, by the hash of its code. */
export interface KnownSummaryRow {
  /** The commit it is stored in. */
  commit_hash: string;
  /** SHA-256 of the node's code, hex, its first 32 characters: analyzer/summarize.ts's codeHashOf. */
  code_hash: string;
  technical_summary: string | null;
  business_summary: string | null;
  security_severity: string | null;
  security_summary: string | null;
  model: string | null;
}

/**
 * The model-written summaries (`metadata.summarySource = 'llm'`) of the nodes with code in the
 * latest uploaded commit of `repo`'s graph (its name in any case), by code hash, only those of
 * `hashes` when given; none when the repo has no graph. What an analysis of the next commit may
 * reuse rather than ask the model again. The hash is computed here from the stored code, so it
 * holds for graphs uploaded without `codeHash` (DevLens's, or summarized before it existed); it
 * must stay the same function as codeHashOf.
 */
export async function latestKnownSummaries(
  db: Kysely<Database>,
  repo: string,
  hashes?: readonly string[],
): Promise<KnownSummaryRow[]> {
  const rows = await sql<KnownSummaryRow>`
    with latest as (
      select c.graph_id, c.commit_hash
        from graph_commits c join code_graphs g on g.graph_id = c.graph_id
       where lower(g.repo) = ${repo.toLowerCase()}
       order by c.uploaded_at desc
       limit 1),
    known as (
      select l.commit_hash, left(encode(sha256(convert_to(n.code, 'UTF8')), 'hex'), 32) as code_hash,
             n.technical_summary, n.business_summary, n.security_severity, n.security_summary,
             n.metadata->>'summaryModel' as model
        from latest l
        join graph_nodes n on n.graph_id = l.graph_id and n.commit_hash = l.commit_hash
       where n.code is not null and n.metadata->>'summarySource' = 'llm')
    select * from known
     where ${hashes === undefined ? sql`true` : sql`code_hash = any(${[...hashes]}::text[])`}`.execute(db);
  return rows.rows;
}
