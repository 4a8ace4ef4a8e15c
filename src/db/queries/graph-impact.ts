import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

type Db = Kysely<Database>;
type Commit = { graphId: string; commitHash: string };

/** A node reached from the start node, at its nearest hop, with the first stored copy of it (absent for an id with no node). */
export interface ReachedRow {
  node_id: string;
  hop: number;
  via: string;
  name: string | null;
  type: string | null;
  file_path: string | null;
  start_line: number | null;
}

/**
 * Nodes within `radius` edges of `nodeId`, against the edge direction (upstream: what depends on
 * it) or along it (downstream). One recursive statement; cycle-safe because every row carries its
 * hop and the walk stops at the radius (UNION drops repeats).
 */
export async function reachableNodes(
  db: Db,
  g: Commit,
  nodeId: string,
  direction: 'upstream' | 'downstream',
  radius: number,
): Promise<ReachedRow[]> {
  const [near, far] =
    direction === 'upstream' ? [sql.ref('e.to_id'), sql.ref('e.from_id')] : [sql.ref('e.from_id'), sql.ref('e.to_id')];
  const rows = await sql<ReachedRow>`
    with recursive reach(node_id, hop, via) as (
      select ${nodeId}::text, 0, ''::text
      union
      select ${far}, r.hop + 1, e.type from reach r
        join graph_edges e on e.graph_id = ${g.graphId} and e.commit_hash = ${g.commitHash} and ${near} = r.node_id
       where r.hop < ${radius}
    ), nearest as (
      select distinct on (node_id) node_id, hop, via from reach where node_id <> ${nodeId} order by node_id, hop, via
    )
    select d.node_id, d.hop, d.via, n.name, n.type, n.file_path, n.start_line
      from nearest d
      left join lateral (select name, type, file_path, start_line from graph_nodes x
                          where x.graph_id = ${g.graphId} and x.commit_hash = ${g.commitHash} and x.node_id = d.node_id
                          order by x.seq limit 1) n on true
     order by d.hop, n.file_path nulls last, n.start_line nulls last, d.node_id`.execute(db);
  return rows.rows;
}

/** A node of `to` that is new, gone or whose code changed since `from`. */
export interface ChangedNodeRow {
  change: 'ADDED' | 'REMOVED' | 'CODECHANGED';
  node_id: string;
  name: string;
  type: string;
  file_path: string;
  start_line: number;
}

/** Nodes of `to` that are new, gone or whose code changed since `from` (first copy of repeated ids; ghosts excluded). */
export async function changedNodes(db: Db, graphId: string, from: string, to: string): Promise<ChangedNodeRow[]> {
  const side = (commit: string) => sql`
    select distinct on (node_id) node_id, name, type, file_path, start_line,
           coalesce(extra->>'codeHash', md5(coalesce(code, ''))) as h
      from graph_nodes where graph_id = ${graphId} and commit_hash = ${commit} and type <> 'GHOST'
     order by node_id, seq`;
  const rows = await sql<ChangedNodeRow>`
    select case when f.node_id is null then 'ADDED' when t.node_id is null then 'REMOVED' else 'CODECHANGED' end as change,
           coalesce(t.node_id, f.node_id) as node_id, coalesce(t.name, f.name) as name, coalesce(t.type, f.type) as type,
           coalesce(t.file_path, f.file_path) as file_path, coalesce(t.start_line, f.start_line) as start_line
      from (${side(to)}) t full join (${side(from)}) f on f.node_id = t.node_id
     where f.node_id is null or t.node_id is null or t.h <> f.h
     order by 1, 5, 6, 2`.execute(db);
  return rows.rows;
}
