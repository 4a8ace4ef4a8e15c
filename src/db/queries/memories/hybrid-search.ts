import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../schema.js';
import { keywordBranchSql } from './keyword-branch.js';
import { accessJoin, memoryColumns } from './memory-row.js';
import { filterSql } from './search-filters.js';
import type { SearchHit, SearchParams } from './search-params.js';
import { vectorBranchSql } from './vector-branch.js';

/**
 * Vector similarities are scaled between the best candidate's (1) and the one at this rank's (0):
 * the least candidates a branch ranks (candidatesFor), so a search's order does not depend on its
 * limit. Candidates beyond it add nothing.
 */
export const VECTOR_REFERENCE_RANK = 30;

/**
 * Hybrid search in one statement (design.md §5): a vector branch (cosine distance, rows of the
 * query's model only; see vectorBranchSql) and a keyword branch (BM25+ over Postgres full text: any
 * word of the query matches, memories with more of its words rank first), each filtered before its
 * LIMIT, then fused by their scores (see fusedScoreSql).
 */
export function hybridSearchSql(p: SearchParams): RawBuilder<SearchHit> {
  if (!Number.isSafeInteger(p.k) || p.k < 1) throw new Error(`bad candidate count ${p.k}`);
  const where = filterSql(p.filters);
  // Keyword branch (keyword-branch.ts): the kw_* CTEs, ending in kw_ranked (id, score, r).
  const keyword = keywordBranchSql(p, where);
  // Vector branch (vector-branch.ts): the vec_* CTEs, ending in vec_ranked (id, distance, r); empty without a query vector.
  const vector = p.vector
    ? vectorBranchSql(p, p.vector, where)
    : sql`vec_ranked as (select null::varchar as id, null::float8 as distance, null::bigint as r where false)`;
  return sql<SearchHit>`
    with ${keyword}, ${vector}, ${fusedScoreSql()}, fused as (
      select id, score as rrf_score, v.r as vector_rank, k.r as keyword_rank, v.distance
        from vec_scaled v full outer join kw_scaled k using (id)
        cross join lateral (select (coalesce(${p.weights.vector}::float8 * v.s, 0)
                                    + coalesce(${p.weights.keyword}::float8 * k.s, 0)) / ${weightSum(p)}::float8 as score) f
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

/** The weights of the branches that run (the vector branch only with a query vector); 1 when none weighs. */
function weightSum(p: SearchParams): number {
  const sum = (p.vector ? p.weights.vector : 0) + p.weights.keyword;
  return sum > 0 ? sum : 1;
}

/**
 * Score fusion: each branch's scores on a common 0–1 scale, combined with the branches' weights
 * (a convex combination: `(w_v × vector + w_k × keyword) / (w_v + w_k)`, 0 for a branch that did
 * not find the memory). Keyword: BM25+ (with session context) over the query's best. Vector: cosine
 * similarity between the best candidate's (1) and the VECTOR_REFERENCE_RANK-th candidate's (0).
 * Unlike reciprocal ranks, this keeps how far apart a branch's hits are: a keyword hit on a rare
 * word far ahead of the rest stays ahead of a weak model's nearly-equidistant neighbours, and a
 * memory both branches like is still lifted. Bruch, Gai & Ingber (2023), "An Analysis of Fusion
 * Functions for Hybrid Retrieval", found such a convex combination better than RRF in and out of domain.
 */
function fusedScoreSql(): RawBuilder<unknown> {
  return sql`kw_scaled as (
      select id, r, score / nullif(max(score) over (), 0) as s from kw_ranked
    ), vec_ref as (
      select min(distance) as best,
             coalesce(max(distance) filter (where r = ${sql.lit(VECTOR_REFERENCE_RANK)}), max(distance)) as floor
        from vec_ranked
    ), vec_scaled as (
      select v.id, v.r, v.distance,
             case when f.floor > f.best then greatest(0, (f.floor - v.distance) / (f.floor - f.best))
                  else (v.distance <= f.best)::int end as s
        from vec_ranked v cross join vec_ref f
    )`;
}

/** Runs the hybrid search: one statement, prepared on Postgres (the HNSW settings are the connections' own, see client.ts). */
export async function searchMemories(db: Kysely<Database>, params: SearchParams): Promise<SearchHit[]> {
  const { rows } = await hybridSearchSql(params).execute(db);
  return rows.map((row) => ({
    ...row,
    rrf_score: Number(row.rrf_score),
    vector_rank: row.vector_rank === null ? null : Number(row.vector_rank),
    keyword_rank: row.keyword_rank === null ? null : Number(row.keyword_rank),
    distance: row.distance === null ? null : Number(row.distance),
  }));
}
