import { sql, type Kysely, type RawBuilder } from 'kysely';
import { RRF_K } from '../../../rank-fusion.js';
import { runPrepared } from '../../client.js';
import type { Database } from '../../schema.js';
import { keywordBranchSql } from './keyword-branch.js';
import { accessJoin, memoryColumns } from './memory-row.js';
import { filterSql } from './search-filters.js';
import type { SearchHit, SearchParams } from './search-params.js';
import { vectorBranchSql } from './vector-branch.js';

/**
 * Hybrid search in one statement (design.md §5): a vector branch (cosine distance, rows of the
 * query's model only; see vectorBranchSql) and a keyword branch (BM25+ over Postgres full text: any
 * word of the query matches, memories with more of its words rank first), each filtered before its
 * LIMIT, fused by reciprocal rank (RRF_K).
 */
export function hybridSearchSql(p: SearchParams): RawBuilder<SearchHit> {
  if (!Number.isSafeInteger(p.k) || p.k < 1) throw new Error(`bad candidate count ${p.k}`);
  const where = filterSql(p.filters);
  // Keyword branch (keyword-branch.ts): the kw_* CTEs, ending in kw_ranked (id, r).
  const keyword = keywordBranchSql(p, where);
  // Vector branch (vector-branch.ts): the vec_* CTEs, ending in vec_ranked (id, distance, r); empty without a query vector.
  const vector = p.vector
    ? vectorBranchSql(p, p.vector, where)
    : sql`vec_ranked as (select null::varchar as id, null::float8 as distance, null::bigint as r where false)`;
  // Fusion: reciprocal rank of each branch (RRF_K), weighted; then the memories' columns.
  return sql<SearchHit>`
    with ${keyword}, ${vector}, fused as (
      select id,
             coalesce(${p.weights.vector}::float8 / (${sql.lit(RRF_K)} + v.r), 0) + coalesce(${p.weights.keyword}::float8 / (${sql.lit(RRF_K)} + k.r), 0) as rrf_score,
             v.r as vector_rank, k.r as keyword_rank, v.distance
        from vec_ranked v full outer join kw_ranked k using (id)
       order by rrf_score desc, id
       limit ${p.limit}
    )
    select ${memoryColumns}, f.rrf_score, f.vector_rank, f.keyword_rank, f.distance
      from fused f
      join semantic_memory m on m.id = f.id
      left join intervention_plans p on p.id = m.project_id
      ${accessJoin}
     order by f.rrf_score desc, f.id`;
}

/** Runs the hybrid search: one prepared statement (the HNSW settings are the connections' own, see client.ts). */
export async function searchMemories(db: Kysely<Database>, params: SearchParams): Promise<SearchHit[]> {
  const rows = await runPrepared(db, hybridSearchSql(params).compile(db));
  return rows.map((row) => ({
    ...row,
    rrf_score: Number(row.rrf_score),
    vector_rank: row.vector_rank === null ? null : Number(row.vector_rank),
    keyword_rank: row.keyword_rank === null ? null : Number(row.keyword_rank),
    distance: row.distance === null ? null : Number(row.distance),
  }));
}
