import { sql, type Kysely } from 'kysely';
import type { Database } from '../../schema.js';

type Db = Kysely<Database>;

/** A node at the other end of an edge (GHOST when the commit does not hold it). */
export interface Neighbour {
  node_id: string;
  name: string | null;
  type: string | null;
  file_path: string | null;
  start_line: number | null;
  edge_type: string;
}

/** Callers (edges into the node) or callees (edges out of it), one row per distinct neighbour and edge type. */
export async function neighbours(
  db: Db,
  g: { graphId: string; commitHash: string },
  nodeId: string,
  direction: 'in' | 'out',
  limit: number,
): Promise<{ rows: Neighbour[]; total: number }> {
  const [self, other] =
    direction === 'in' ? [sql.ref('e.to_id'), sql.ref('e.from_id')] : [sql.ref('e.from_id'), sql.ref('e.to_id')];
  const rows = await sql<Neighbour & { total: number }>`
    with edges as (
      select distinct ${other} as node_id, e.type as edge_type from graph_edges e
       where e.graph_id = ${g.graphId} and e.commit_hash = ${g.commitHash} and ${self} = ${nodeId}
    )
    select d.node_id, d.edge_type, n.name, n.type, n.file_path, n.start_line, count(*) over ()::int as total
      from edges d
      left join lateral (select name, type, file_path, start_line from graph_nodes x
                          where x.graph_id = ${g.graphId} and x.commit_hash = ${g.commitHash} and x.node_id = d.node_id
                          order by x.seq limit 1) n on true
     order by d.edge_type, n.file_path nulls last, n.start_line nulls last, d.node_id
     limit ${limit}`.execute(db);
  return { rows: rows.rows, total: rows.rows[0]?.total ?? 0 };
}
