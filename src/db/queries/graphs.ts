import { sql, type Kysely, type Selectable } from 'kysely';
import { likeLiteral } from '../like-pattern.js';
import type { Database, GraphEdgesTable, GraphNodesTable } from '../schema.js';
import { tsqueryTerm } from '../tsquery.js';
import { GENERATED_CODE_PATTERN, PATH_PENALTY, TEST_CODE_PATTERN } from '../../domain/graphs/file-kind.js';

type Db = Kysely<Database>;

/** A node as stored, plus the text its search document is built from (the search column itself is computed in SQL). */
export type NodeRow = Omit<Selectable<GraphNodesTable>, 'graph_id' | 'commit_hash' | 'search'> & {
  /** Search document parts: name (A), path (B), prose and identifiers (C), security (D). */
  name_doc: string;
  path_doc: string;
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

export async function insertNodes(trx: Db, graphId: string, commitHash: string, rows: NodeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    insert into graph_nodes (graph_id, commit_hash, seq, node_id, name, type, file_path, start_line, end_line,
                             technical_summary, business_summary, security_severity, security_summary, code, score,
                             metadata, extra, search)
    select ${graphId}, ${commitHash}, r.seq, r.node_id, r.name, r.type, r.file_path, r.start_line, r.end_line,
           r.technical_summary, r.business_summary, r.security_severity, r.security_summary, r.code, r.score,
           r.metadata, r.extra,
           setweight(to_tsvector('simple', r.name_doc), 'A')
             || setweight(to_tsvector('simple', r.path_doc), 'B')
             || setweight(to_tsvector('english', r.prose), 'C')
             || setweight(to_tsvector('simple', r.idents), 'C')
             || setweight(to_tsvector('english', r.security_doc), 'D')
      from jsonb_to_recordset(${jsonParam(rows)}::jsonb) as r(
             seq integer, node_id text, name text, type text, file_path text, start_line integer, end_line integer,
             technical_summary text, business_summary text, security_severity text, security_summary text, code text,
             score double precision, metadata jsonb, extra jsonb, name_doc text, path_doc text, prose text, idents text,
             security_doc text)`.execute(trx);
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

/** Scores from the file's nodeScores map, for nodes that carried none of their own. */
/**
 * Refreshes the graph tables' planner statistics. An upload changes them a lot: searches planned on
 * the old statistics ran 5–10× slower at 50k nodes until autovacuum's next pass, a minute or more later.
 */
export async function analyzeGraphTables(db: Db): Promise<void> {
  await sql`analyze graph_nodes, graph_edges`.execute(db);
}

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

/** Every graph with its latest commit (the one analyzed last). */
export async function listGraphs(db: Db): Promise<GraphSummaryRow[]> {
  const rows = await sql<GraphSummaryRow>`
    select g.graph_id, g.repo, l.commit_hash as latest_commit, l.analyzed_at, l.uploaded_at,
           l.node_count as nodes, l.edge_count as edges,
           (select count(*) from graph_commits c where c.graph_id = g.graph_id)::int as commits
      from code_graphs g
      left join lateral (
        select commit_hash, analyzed_at, uploaded_at, node_count, edge_count from graph_commits c
         where c.graph_id = g.graph_id order by analyzed_at desc, uploaded_at desc limit 1) l on true
     order by lower(g.repo)`.execute(db);
  return rows.rows;
}

/** Deletes a graph with all its commits; false when there was none. */
export async function deleteGraph(db: Db, graphId: string): Promise<boolean> {
  const result = await db.deleteFrom('code_graphs').where('graph_id', '=', graphId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** A node as the tools show it, with its search rank. */
export type NodeHit = Pick<
  Selectable<GraphNodesTable>,
  'seq' | 'node_id' | 'name' | 'type' | 'file_path' | 'start_line' | 'end_line' | 'score'
> & {
  rank: number;
  exact: boolean;
};

/** ts_rank weights {D, C, B, A}: DevLens's boosts (name 3, path 2, summaries 1, security 0.5) over 3. */
const FIELD_WEIGHTS = '{0.17,0.33,0.67,1.0}';

/** Where a symbol is rarely what is asked for: domain/graphs/file-kind.ts's rule, in SQL. */
const pathPenalty = (alias: string) => {
  const type = sql.ref(`${alias}.type`);
  const path = sql.ref(`${alias}.file_path`);
  return sql`(case
    when ${type} = 'TEST' or ${path} ~* ${TEST_CODE_PATTERN} then ${sql.lit(PATH_PENALTY.test)}
    when ${path} ~* ${GENERATED_CODE_PATTERN} then ${sql.lit(PATH_PENALTY.generated)}
    else 1.0 end)`;
};

/** Candidates ranked by ts_rank before the finer field-coverage scoring (bounds its cost). */
const SYMBOL_CANDIDATES = 50;
/** Nodes matching the query that are ranked at all (bounds the cost of a query of common words on a large graph). */
const MAX_MATCHED = 300;

/**
 * Symbols of one commit matching `query`: exact identifier matches (the name, a method's name
 * after its class, or the node id) first; then, BM25F-style, the query words each count by the best
 * field they occur in (name 3, path 2, summaries or code 1, security 0.5 — DevLens's boosts), plus
 * the share of the name the query covers (`merge headers` prefers mergeHeaders to
 * mergeHeaderContainers), with ts_rank breaking ties; times the path penalty. `words` are the
 * query's identifier words (simple config), `prose` its text (english config).
 */
export async function findSymbols(
  db: Db,
  g: { graphId: string; commitHash: string },
  q: { query: string; words: string; prose: string; limit: number; parts?: string[] },
): Promise<NodeHit[]> {
  const lexemes = (config: string, text: string) =>
    sql`select unnest(tsvector_to_array(to_tsvector(${sql.lit(config)}::regconfig, ${text}))) as lex`;
  const quote = (column: string) => tsqueryTerm(sql.ref(column));
  const wordsCte = sql`words as (${lexemes('simple', q.words)}), prose as (${lexemes('english', q.prose)} except select lex from words)`;

  // 1. The queries: any word (identifier words and prose stems), and the strict one — every part of
  //    the query, as its identifier word or its english stem.
  // 2. Matches (graph_search_matches, migrations/0006): the strict query when it finds enough or
  //    the query names a symbol exactly, else any word; at most MAX_MATCHED are ranked.
  // 3. Ranking: exact names first, then field coverage (see above), ts_rank breaking ties.
  // One statement: each round trip costs as much as a step here.
  const likeSuffix = sql`('%.' || ${likeLiteral(sql`lower(${q.query})`)})`;
  const graphRow = sql`n.graph_id = ${g.graphId} and n.commit_hash = ${g.commitHash}`;
  const rows = await sql<NodeHit>`
    with ${wordsCte},
    tsq as (
      select (select string_agg(${quote('lex')}, ' | ') from (select lex from words union all select lex from prose) l)::tsquery as q,
             (select string_agg('(' || ${quote('part')} || coalesce(' | ' || ${quote('stem')}, '') || ')', ' & ')
                from (select p.part, (select lex from unnest(tsvector_to_array(to_tsvector('english', p.part))) lex limit 1) as stem
                        from unnest(${q.parts ?? []}::text[]) as p(part)) s)::tsquery as strict,
             -- Identifier words count in every field; prose stems only in summaries/code and security
             -- (an english stem matching a name part would count a word twice: headers → header).
             (select array_agg((${quote('lex')} || ':A')::tsquery) from words) as a,
             (select array_agg((${quote('lex')} || ':B')::tsquery) from words) as b,
             (select array_agg((${quote('lex')} || ':C')::tsquery) from (select lex from words union all select lex from prose) l) as c,
             (select array_agg((${quote('lex')} || ':D')::tsquery) from (select lex from words union all select lex from prose) l) as d
    ), named as materialized (
      select n.seq from graph_nodes n where ${graphRow} and (lower(n.name) = lower(${q.query}) or n.node_id = ${q.query})
    ), strict_matches as materialized (
      select m as seq from tsq, graph_search_matches(${g.graphId}, ${g.commitHash}, tsq.strict, ${sql.lit(MAX_MATCHED)}) m
       where tsq.strict is not null
    ), matched as (
      select seq from strict_matches
      union
      select m from tsq, graph_search_matches(${g.graphId}, ${g.commitHash}, tsq.q, ${sql.lit(MAX_MATCHED)}) m
       where tsq.q is not null
         and ((select count(*) from strict_matches) = 0
              or ((select count(*) from strict_matches) < ${q.limit} and not exists (select 1 from named)))
    ), candidates as (
      select n.seq, n.node_id, n.name, n.type, n.file_path, n.start_line, n.end_line, n.score, n.search,
             (lower(n.name) = lower(${q.query}) or n.node_id = ${q.query} or lower(n.name) like ${likeSuffix}) as exact,
             coalesce(ts_rank(${FIELD_WEIGHTS}::float4[], n.search, (select q from tsq)), 0) as ts
        from graph_nodes n
       where ${graphRow} and n.type <> 'GHOST'
         and n.seq in (select seq from matched union select seq from named)
       order by exact desc, ts desc
       limit ${sql.lit(SYMBOL_CANDIDATES)}
    )
    select c.seq, c.node_id, c.name, c.type, c.file_path, c.start_line, c.end_line, c.score, c.exact,
           (f.coverage + f.name_hits / greatest(length(ts_filter(c.search, '{a}')), 1) + c.ts) * ${pathPenalty('c')} as rank
      from candidates c
      left join tsq on true
      cross join lateral (
        select coalesce(sum(case when t.a is not null and c.search @@ t.a then 3 when t.b is not null and c.search @@ t.b then 2
                                 when c.search @@ t.c then 1 when c.search @@ t.d then 0.5 else 0 end), 0) as coverage,
               count(*) filter (where t.a is not null and c.search @@ t.a)::float8 as name_hits
          from unnest(tsq.a, tsq.b, tsq.c, tsq.d) as t(a, b, c, d)) f
     order by c.exact desc, rank desc, c.score desc nulls last, c.seq
     limit ${q.limit}`.execute(db);
  return rows.rows.map((r) => ({ ...r, rank: Number(r.rank), score: r.score === null ? null : Number(r.score) }));
}

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

/** Edges among these nodes, one per (from, to, type). */
export async function edgesAmong(
  db: Db,
  g: { graphId: string; commitHash: string },
  ids: string[],
): Promise<Array<{ from_id: string; to_id: string; type: string }>> {
  if (ids.length === 0) return [];
  const rows = await sql<{ from_id: string; to_id: string; type: string }>`
    select distinct from_id, to_id, type from graph_edges
     where graph_id = ${g.graphId} and commit_hash = ${g.commitHash}
       and from_id = any(${ids}::text[]) and to_id = any(${ids}::text[]) and from_id <> to_id
     order by from_id, to_id, type`.execute(db);
  return rows.rows;
}
