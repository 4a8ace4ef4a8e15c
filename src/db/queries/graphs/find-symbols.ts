import { sql, type Kysely, type Selectable } from 'kysely';
import { GENERATED_CODE_PATTERN, PATH_PENALTY, TEST_CODE_PATTERN } from '../../../file-kind.js';
import { likeLiteral } from '../../like-pattern.js';
import type { Database, GraphNodesTable } from '../../schema.js';
import { tsqueryTerm } from '../../tsquery.js';

type Db = Kysely<Database>;

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

/** Where a symbol is rarely what is asked for: file-kind.ts's rule, in SQL. */
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
