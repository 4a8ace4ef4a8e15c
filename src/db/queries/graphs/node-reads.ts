import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, GraphNodesTable } from '../../schema.js';

type Db = Kysely<Database>;

export interface NodeDetail extends Omit<Selectable<GraphNodesTable>, 'graph_id' | 'commit_hash' | 'search'> {
  /** How many nodes of the commit share this id (overloads), and which of them this is (1-based). */
  copies: number;
  copy: number;
}

/** The nodes with this id (all copies, in file order), or — when none has it — named so (any case), best first. */
export async function nodesById(
  db: Db,
  g: { graphId: string; commitHash: string },
  nodeId: string,
): Promise<NodeDetail[]> {
  const rows = await sql<NodeDetail>`
    select n.seq, n.node_id, n.name, n.type, n.file_path, n.start_line, n.end_line, n.technical_summary,
           n.business_summary, n.security_severity, n.security_summary, n.code, n.score, n.metadata, n.extra,
           count(*) over ()::int as copies, row_number() over (order by n.seq)::int as copy
      from graph_nodes n
     where n.graph_id = ${g.graphId} and n.commit_hash = ${g.commitHash} and n.node_id = ${nodeId}
     order by n.seq`.execute(db);
  return rows.rows;
}

/** What a packet shows of a node. */
export type PacketNodeRow = Pick<
  Selectable<GraphNodesTable>,
  | 'node_id'
  | 'name'
  | 'type'
  | 'file_path'
  | 'start_line'
  | 'end_line'
  | 'technical_summary'
  | 'business_summary'
  | 'security_severity'
  | 'security_summary'
  | 'code'
  | 'score'
>;

/** The first copy of each of these node ids. */
export async function nodesByIds(
  db: Db,
  g: { graphId: string; commitHash: string },
  ids: string[],
): Promise<PacketNodeRow[]> {
  if (ids.length === 0) return [];
  const rows = await sql<PacketNodeRow>`
    select distinct on (n.node_id) n.node_id, n.name, n.type, n.file_path, n.start_line, n.end_line, n.technical_summary,
           n.business_summary, n.security_severity, n.security_summary, n.code, n.score
      from graph_nodes n
     where n.graph_id = ${g.graphId} and n.commit_hash = ${g.commitHash} and n.node_id = any(${ids}::text[])
     order by n.node_id, n.seq`.execute(db);
  return rows.rows.map((r) => ({ ...r, score: r.score === null ? null : Number(r.score) }));
}

/** The file nodes of these paths (a `focus` may name a file). */
export async function fileNodes(
  db: Db,
  g: { graphId: string; commitHash: string },
  paths: string[],
): Promise<string[]> {
  if (paths.length === 0) return [];
  const rows = await sql<{ node_id: string }>`
    select distinct node_id from graph_nodes
     where graph_id = ${g.graphId} and commit_hash = ${g.commitHash} and type = 'FILE'
       and (file_path = any(${paths}::text[]) or node_id = any(${paths.map((p) => `file::${p}`)}::text[]))`.execute(db);
  return rows.rows.map((r) => r.node_id);
}

/**
 * Whether any node of the commit carries a technical or business summary: one `exists`, which stops
 * at the first (a structure-only commit reads its nodes once, by the node-id index's leading columns).
 */
export async function commitHasSummaries(db: Db, g: { graphId: string; commitHash: string }): Promise<boolean> {
  const row = await sql<{ found: boolean }>`
    select exists (
      select 1 from graph_nodes
       where graph_id = ${g.graphId} and commit_hash = ${g.commitHash}
         and (nullif(business_summary, '') is not null or nullif(technical_summary, '') is not null)
    ) as found`.execute(db);
  return row.rows[0]?.found === true;
}
