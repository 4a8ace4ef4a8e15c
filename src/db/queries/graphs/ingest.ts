import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, GraphEdgesTable, GraphNodesTable } from '../../schema.js';
import type { GraphIdentity } from './catalogue.js';

type Db = Kysely<Database>;

/** A node as stored, plus the text its search document is built from (the search column itself is computed in SQL). */
export type NodeRow = Omit<Selectable<GraphNodesTable>, 'graph_id' | 'commit_hash' | 'search'> & {
  /**
   * Search document parts (issue 21): name with its parts (A, and the parts' english stems from
   * `name_words`), path and signature (B), prose — summaries, doc comments, security note — (C),
   * identifiers of the code (D).
   */
  name_doc: string;
  name_words: string;
  path_doc: string;
  signature_doc: string;
  prose: string;
  idents: string;
  /** The security note as its search document reads it (cut to MAX_SUMMARY_DOC). */
  security_doc: string;
};

export type EdgeRow = Omit<Selectable<GraphEdgesTable>, 'graph_id' | 'commit_hash'>;

/** JSON for a jsonb parameter; Postgres text cannot hold NUL, so NULs inside strings are dropped. */
function jsonParam(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'string' && v.includes('\0') ? v.replaceAll('\0', '') : v,
  );
}

/** Serialises concurrent uploads of one commit (the lock ends with the transaction). */
export async function lockCommit(trx: Db, graphId: string, commitHash: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('graph-commit'), hashtext(${graphId} || ' ' || ${commitHash}))`.execute(
    trx,
  );
}

/** Creates the graph (or touches it) and returns it; concurrent creators get the same row. */
export async function upsertGraph(
  trx: Db,
  g: { graphId: string; repo: string; branch: string | null; createdBy: string | null },
): Promise<GraphIdentity> {
  const row = await sql<GraphIdentity>`
    insert into code_graphs (graph_id, repo, default_branch, created_by)
    values (${g.graphId}, ${g.repo}, ${g.branch}, ${g.createdBy})
    on conflict ((lower(repo))) do update set updated_at = now(), default_branch = coalesce(excluded.default_branch, code_graphs.default_branch)
    returning graph_id, repo`.execute(trx);
  return row.rows[0]!;
}

/** Drops the commit's rows if it was uploaded before and inserts its row afresh. */
export async function replaceCommit(
  trx: Db,
  c: { graphId: string; commitHash: string; branch: string | null; analyzedAt: Date; createdBy: string | null },
): Promise<void> {
  await trx
    .deleteFrom('graph_commits')
    .where('graph_id', '=', c.graphId)
    .where('commit_hash', '=', c.commitHash)
    .execute();
  await trx
    .insertInto('graph_commits')
    .values({
      graph_id: c.graphId,
      commit_hash: c.commitHash,
      branch: c.branch,
      analyzed_at: c.analyzedAt,
      created_by: c.createdBy,
    })
    .execute();
}

/** The graph's newest commit other than `commitHash`: the one an upload of `commitHash` follows. */
export async function previousCommit(trx: Db, graphId: string, commitHash: string): Promise<string | undefined> {
  const row = await trx
    .selectFrom('graph_commits')
    .select('commit_hash')
    .where('graph_id', '=', graphId)
    .where('commit_hash', '<>', commitHash)
    .orderBy('uploaded_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.commit_hash;
}

/** A node's summaries written by a model (`metadata.summarySource = 'llm'`), with the md5 of its code. */
export interface LlmSummaryRow {
  node_id: string;
  code_md5: string;
  technical_summary: string | null;
  business_summary: string | null;
  security_severity: string | null;
  security_summary: string | null;
  model: string | null;
}

/** The model-written summaries of the nodes `ids` in a commit (by the node-id index), with their code's md5. */
export async function llmSummaries(
  trx: Db,
  graphId: string,
  commitHash: string,
  ids: readonly string[],
): Promise<LlmSummaryRow[]> {
  if (ids.length === 0) return [];
  const rows = await sql<LlmSummaryRow>`
    select node_id, md5(code) as code_md5, technical_summary, business_summary, security_severity,
           security_summary, metadata->>'summaryModel' as model
      from graph_nodes
     where graph_id = ${graphId} and commit_hash = ${commitHash} and node_id = any(${[...ids]}::text[])
       and code is not null and metadata->>'summarySource' = 'llm'`.execute(trx);
  return rows.rows;
}

export async function insertNodes(trx: Db, graphId: string, commitHash: string, rows: NodeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    insert into graph_nodes (graph_id, commit_hash, seq, node_id, name, type, file_path, start_line, end_line,
                             technical_summary, business_summary, security_severity, security_summary, code, score,
                             metadata, extra, search, embed_doc)
    select ${graphId}, ${commitHash}, r.seq, r.node_id, r.name, r.type, r.file_path, r.start_line, r.end_line,
           r.technical_summary, r.business_summary, r.security_severity, r.security_summary, r.code, r.score,
           r.metadata, r.extra,
           setweight(to_tsvector('simple', r.name_doc), 'A')
             || setweight(to_tsvector('english', r.name_words), 'A')
             || setweight(to_tsvector('simple', r.path_doc), 'B')
             || setweight(to_tsvector('simple', r.signature_doc), 'B')
             || setweight(to_tsvector('english', r.prose), 'C')
             || setweight(to_tsvector('english', r.security_doc), 'C')
             || setweight(to_tsvector('simple', r.idents), 'D'),
           r.embed_doc
      from jsonb_to_recordset(${jsonParam(rows)}::jsonb) as r(
             seq integer, node_id text, name text, type text, file_path text, start_line integer, end_line integer,
             technical_summary text, business_summary text, security_severity text, security_summary text, code text,
             score double precision, metadata jsonb, extra jsonb, name_doc text, name_words text, path_doc text,
             signature_doc text, prose text, idents text, security_doc text, embed_doc text)`.execute(trx);
}

export async function insertEdges(trx: Db, graphId: string, commitHash: string, rows: EdgeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    insert into graph_edges (graph_id, commit_hash, seq, from_id, to_id, type, metadata)
    select ${graphId}, ${commitHash}, r.seq, r.from_id, r.to_id, r.type, r.metadata
      from jsonb_to_recordset(${jsonParam(rows)}::jsonb) as r(seq integer, from_id text, to_id text, type text, metadata jsonb)`.execute(
    trx,
  );
}

/**
 * Refreshes the graph tables' planner statistics. An upload changes them a lot: searches planned on
 * the old statistics ran 5–10× slower at 50k nodes until autovacuum's next pass, a minute or more later.
 */
export async function analyzeGraphTables(db: Db): Promise<void> {
  await sql`analyze graph_nodes, graph_edges`.execute(db);
}

/** Scores from the file's nodeScores map, for nodes that carried none of their own. */
export async function applyNodeScores(
  trx: Db,
  graphId: string,
  commitHash: string,
  scores: Record<string, number>,
): Promise<void> {
  await sql`
    update graph_nodes n set score = s.value::double precision
      from jsonb_each_text(${jsonParam(scores)}::jsonb) s
     where n.graph_id = ${graphId} and n.commit_hash = ${commitHash} and n.node_id = s.key and n.score is null
       and s.value ~ '^-?[0-9.eE+-]+$'`.execute(trx);
}

/** Completes the commit's row; returns when it was uploaded. */
export async function finishCommit(
  trx: Db,
  c: {
    graphId: string;
    commitHash: string;
    analyzedAt: Date;
    nodes: number;
    edges: number;
    stats: unknown;
    extra: Record<string, unknown> | null;
  },
): Promise<Date> {
  const row = await trx
    .updateTable('graph_commits')
    .set({
      analyzed_at: c.analyzedAt,
      node_count: c.nodes,
      edge_count: c.edges,
      stats: c.stats === undefined ? null : jsonParam(c.stats),
      extra: c.extra === null ? null : jsonParam(c.extra),
    })
    .where('graph_id', '=', c.graphId)
    .where('commit_hash', '=', c.commitHash)
    .returning('uploaded_at')
    .executeTakeFirstOrThrow();
  return row.uploaded_at;
}

/** Drops the graph's commits past the newest `keep` (by analysis time, then upload time). */
export async function applyRetention(trx: Db, graphId: string, keep: number): Promise<number> {
  const result = await sql`
    delete from graph_commits c
     using (select commit_hash from graph_commits where graph_id = ${graphId}
             order by analyzed_at desc, uploaded_at desc offset ${keep}) old
     where c.graph_id = ${graphId} and c.commit_hash = old.commit_hash`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}
