import { sql, type Kysely } from 'kysely';
import type { Database } from '../../schema.js';

type Db = Kysely<Database>;

export type GraphIdentity = { graph_id: string; repo: string };

/** The graph named `repo` (any case) or with id `graphId`, if either exists. */
export async function findGraph(db: Db, by: { repo?: string; graphId?: string }): Promise<GraphIdentity[]> {
  return db
    .selectFrom('code_graphs')
    .select(['graph_id', 'repo'])
    .where((eb) =>
      eb.or([
        ...(by.graphId !== undefined ? [eb('graph_id', '=', by.graphId)] : []),
        ...(by.repo !== undefined ? [eb(sql`lower(repo)`, '=', by.repo.toLowerCase())] : []),
      ]),
    )
    .execute();
}

export interface GraphSummaryRow {
  graph_id: string;
  repo: string;
  latest_commit: string | null;
  analyzed_at: Date | null;
  uploaded_at: Date | null;
  nodes: number | null;
  edges: number | null;
  commits: number;
}

/**
 * Every graph with its latest commit (the one analyzed last); with `repos` (lower-cased names, the
 * caller's limit), only those graphs.
 */
export async function listGraphs(db: Db, repos?: readonly string[]): Promise<GraphSummaryRow[]> {
  const visible = repos === undefined ? sql`true` : sql`lower(g.repo) = any(${[...repos]}::text[])`;
  const rows = await sql<GraphSummaryRow>`
    select g.graph_id, g.repo, l.commit_hash as latest_commit, l.analyzed_at, l.uploaded_at,
           l.node_count as nodes, l.edge_count as edges,
           (select count(*) from graph_commits c where c.graph_id = g.graph_id)::int as commits
      from code_graphs g
      left join lateral (
        select commit_hash, analyzed_at, uploaded_at, node_count, edge_count from graph_commits c
         where c.graph_id = g.graph_id order by analyzed_at desc, uploaded_at desc limit 1) l on true
     where ${visible}
     order by lower(g.repo)`.execute(db);
  return rows.rows;
}

/** Deletes a graph with all its commits; false when there was none. */
export async function deleteGraph(db: Db, graphId: string): Promise<boolean> {
  const result = await db.deleteFrom('code_graphs').where('graph_id', '=', graphId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
