import { sql, type Kysely } from 'kysely';
import { likeLiteral } from '../../like-pattern.js';
import type { Database } from '../../schema.js';

type Db = Kysely<Database>;

/** `n.name` is `name` (any case) or ends in `.name` (LIKE's wildcards in `name` escaped). */
const named = (name: string) =>
  sql`(lower(n.name) = lower(${name}) or lower(n.name) like ('%.' || ${likeLiteral(sql`lower(${name})`)}))`;

/**
 * Nodes whose name is `name` (any case) or ends in `.name` (a method after its class: `retry` finds
 * `Ky.retry`), GHOSTs left out, one row per node id, in node id order (resolve_context's focus reads
 * them so); {@link nodesNamed} gives them best scored first.
 */
export async function nodesByName(
  db: Db,
  g: { graphId: string; commitHash: string },
  name: string,
): Promise<Array<{ node_id: string }>> {
  const rows = await sql<{ node_id: string }>`
    select distinct on (n.node_id) n.node_id, n.score, n.type from graph_nodes n
     where n.graph_id = ${g.graphId} and n.commit_hash = ${g.commitHash} and n.type <> 'GHOST'
       and ${named(name)}
     order by n.node_id, n.score desc nulls last`.execute(db);
  return rows.rows;
}

/**
 * The nodes {@link nodesByName} finds, best scored first (no score last, then by id): the node a
 * symbol name locates and, after it, the others it could mean. At most `limit`.
 */
export async function nodesNamed(
  db: Db,
  g: { graphId: string; commitHash: string },
  name: string,
  limit: number,
): Promise<string[]> {
  const rows = await sql<{ node_id: string }>`
    select node_id from (
      select distinct on (n.node_id) n.node_id, n.score from graph_nodes n
       where n.graph_id = ${g.graphId} and n.commit_hash = ${g.commitHash} and n.type <> 'GHOST'
         and ${named(name)}
       order by n.node_id, n.score desc nulls last
    ) named
     order by score desc nulls last, node_id
     limit ${limit}`.execute(db);
  return rows.rows.map((r) => r.node_id);
}
