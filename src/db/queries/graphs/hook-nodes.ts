import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, GraphNodesTable } from '../../schema.js';

type Db = Kysely<Database>;

/** A node as a hook shows it: where it is and the first of its summaries. */
export type HookNodeRow = Pick<
  Selectable<GraphNodesTable>,
  'node_id' | 'name' | 'type' | 'file_path' | 'start_line' | 'end_line'
> & { summary: string | null };

/**
 * The main symbols of a file: its nodes but the file itself and references (GHOST), the
 * highest-scored first (then in file order), at most `limit`.
 */
export async function fileSymbols(
  db: Db,
  g: { graphId: string; commitHash: string },
  filePath: string,
  limit: number,
): Promise<HookNodeRow[]> {
  const rows = await sql<HookNodeRow>`
    select n.node_id, n.name, n.type, n.file_path, n.start_line, n.end_line,
           coalesce(n.technical_summary, n.business_summary) as summary
      from graph_nodes n
     where n.graph_id = ${g.graphId} and n.commit_hash = ${g.commitHash} and n.file_path = ${filePath}
       and n.type not in ('FILE', 'GHOST')
     order by n.score desc nulls last, n.start_line, n.seq
     limit ${limit}`.execute(db);
  return rows.rows;
}

/** These nodes' summaries (the first copy of each id). */
export async function nodeSummaries(
  db: Db,
  g: { graphId: string; commitHash: string },
  ids: readonly string[],
): Promise<Map<string, string | null>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{ node_id: string; summary: string | null }>`
    select distinct on (n.node_id) n.node_id, coalesce(n.technical_summary, n.business_summary) as summary
      from graph_nodes n
     where n.graph_id = ${g.graphId} and n.commit_hash = ${g.commitHash} and n.node_id = any(${[...ids]}::text[])
     order by n.node_id, n.seq`.execute(db);
  return new Map(rows.rows.map((r) => [r.node_id, r.summary]));
}
