import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

type Db = Kysely<Database>;
type Commit = { graphId: string; commitHash: string };

/** Nodes of a commit (ghosts excluded), and how many of them carry a technical or business summary. */
export async function summaryCoverage(db: Db, g: Commit): Promise<{ nodes: number; with_summary: number }> {
  const coverage = await sql<{ nodes: number; with_summary: number }>`
    select count(*)::int as nodes,
           count(*) filter (where technical_summary is not null or business_summary is not null)::int as with_summary
      from graph_nodes where graph_id = ${g.graphId} and commit_hash = ${g.commitHash} and type <> 'GHOST'`.execute(db);
  return coverage.rows[0]!;
}

/** The distinct CALLS/IMPORTS edges of a commit between two different nodes: what dependency cycles are made of. */
export async function dependencyEdges(db: Db, g: Commit): Promise<Array<{ from_id: string; to_id: string }>> {
  const edges = await sql<{ from_id: string; to_id: string }>`
    select distinct e.from_id, e.to_id from graph_edges e
     where e.graph_id = ${g.graphId} and e.commit_hash = ${g.commitHash} and e.type in ('CALLS', 'IMPORTS') and e.from_id <> e.to_id`.execute(
    db,
  );
  return edges.rows;
}
