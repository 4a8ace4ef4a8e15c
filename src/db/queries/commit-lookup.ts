import { sql, type Kysely } from 'kysely';
import { likeLiteral } from '../like-pattern.js';
import type { Database } from '../schema.js';

type Db = Kysely<Database>;

/**
 * The stored commits of a graph whose hash is `commitHash` or starts with it (LIKE wildcards in it
 * escaped): the exact match first, at most two rows, so a caller can tell an ambiguous prefix.
 */
export async function commitsByPrefix(
  db: Db,
  graphId: string,
  commitHash: string,
): Promise<Array<{ commit_hash: string; analyzed_at: Date; uploaded_at: Date }>> {
  const rows = await sql<{ commit_hash: string; analyzed_at: Date; uploaded_at: Date }>`
    select commit_hash, analyzed_at, uploaded_at from graph_commits
     where graph_id = ${graphId} and (commit_hash = ${commitHash} or commit_hash like (${likeLiteral(sql`${commitHash}`)} || '%'))
     order by commit_hash = ${commitHash} desc limit 2`.execute(db);
  return rows.rows;
}

/** The branch and statistics recorded for one commit of a graph; undefined when it is not stored. */
export async function commitBranchAndStats(db: Db, graphId: string, commitHash: string) {
  return db
    .selectFrom('graph_commits')
    .select(['branch', 'stats'])
    .where('graph_id', '=', graphId)
    .where('commit_hash', '=', commitHash)
    .executeTakeFirst();
}

/** The node count recorded for one commit of a graph; 0 when it is not stored. */
export async function commitNodeCount(db: Db, g: { graphId: string; commitHash: string }): Promise<number> {
  const row = await db
    .selectFrom('graph_commits')
    .select('node_count')
    .where('graph_id', '=', g.graphId)
    .where('commit_hash', '=', g.commitHash)
    .executeTakeFirst();
  return row?.node_count ?? 0;
}
