import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../schema.js';
import { keywordBranchSql, scopeSizeSql } from './keyword-branch.js';
import { accessJoin, memoryColumns, type MemoryRow } from './memory-row.js';
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
 * Hybrid search in one statement (design.md §5). The service runs it in parts (searchMemories: the
 * branches side by side, fused in fuseRanks); this whole form is what the research scripts time and
 * what a test holds the parts to: a vector branch (cosine distance, rows of the
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
    ? vectorBranchSql(p, p.vector)
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
      join semantic_memory m on m.id = f.id and m.archived_at is null
      left join intervention_plans p on p.id = m.project_id
      ${accessJoin}
     order by f.rrf_score desc, f.id`;
}

/** The weights of the branches that run (the vector branch only with a query vector); 1 when none weighs. */
function weightSum(p: Pick<SearchParams, 'vector' | 'weights'>): number {
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

/** A keyword candidate: its final score (BM25+ with session context) and rank. */
export interface KeywordRank {
  id: string;
  score: number;
  r: number;
}

/** A vector candidate: its cosine distance to the query and rank. */
export interface VectorRank {
  id: string;
  distance: number;
  r: number;
}

/** A fused hit before its memory is read: `hybridSearchSql`'s `fused`. */
export interface FusedRank {
  id: string;
  rrf_score: number;
  vector_rank: number | null;
  keyword_rank: number | null;
  distance: number | null;
}

/** The keyword branch alone: its ranked candidates. */
export function keywordRanksSql(p: SearchParams): RawBuilder<KeywordRank> {
  return sql<KeywordRank>`with ${keywordBranchSql(p, filterSql(p.filters))} select id, score, r from kw_ranked`;
}

/** The vector branch alone (with the scope's size from the keyword statistics): its ranked candidates. */
export function vectorRanksSql(p: SearchParams, vector: NonNullable<SearchParams['vector']>): RawBuilder<VectorRank> {
  return sql<VectorRank>`
    with ${scopeSizeSql(p)}, ${vectorBranchSql(p, vector)}
    select id, distance, r from vec_ranked`;
}

/**
 * The fusion of `hybridSearchSql` (fusedScoreSql, then `fused`), over the two branches' candidates:
 * the same arithmetic in the same order, and the same order of hits (score, then id). (A branch's
 * own scores may differ from the one statement's in their last bit: a sum over rows in another order.) Keyword: score over the best score. Vector: between the best distance (1) and
 * the one at VECTOR_REFERENCE_RANK (0), or the worst when there are fewer candidates.
 */
export function fuseRanks(
  keyword: KeywordRank[],
  vector: VectorRank[],
  p: Pick<SearchParams, 'limit' | 'weights' | 'vector'>,
): FusedRank[] {
  const fused = new Map<
    string,
    { k: KeywordRank | null; ks: number | null; v: VectorRank | null; vs: number | null }
  >();
  const best = keyword.reduce((max, c) => Math.max(max, c.score), Number.NEGATIVE_INFINITY);
  for (const c of keyword) fused.set(c.id, { k: c, ks: best === 0 ? null : c.score / best, v: null, vs: null });
  if (vector.length > 0) {
    const nearest = Math.min(...vector.map((c) => c.distance));
    const floor =
      vector.find((c) => c.r === VECTOR_REFERENCE_RANK)?.distance ?? Math.max(...vector.map((c) => c.distance));
    for (const c of vector) {
      const vs =
        floor > nearest ? Math.max(0, (floor - c.distance) / (floor - nearest)) : c.distance <= nearest ? 1 : 0;
      const hit = fused.get(c.id);
      if (hit) Object.assign(hit, { v: c, vs });
      else fused.set(c.id, { k: null, ks: null, v: c, vs });
    }
  }
  const sum = weightSum(p);
  return [...fused]
    .map(([id, h]) => ({
      id,
      rrf_score: ((h.vs === null ? 0 : p.weights.vector * h.vs) + (h.ks === null ? 0 : p.weights.keyword * h.ks)) / sum,
      vector_rank: h.v?.r ?? null,
      keyword_rank: h.k?.r ?? null,
      distance: h.v?.distance ?? null,
    }))
    .sort((a, b) => b.rrf_score - a.rrf_score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, p.limit);
}

/**
 * The live memories of these ids, as search hits read them (any order). An id with no live memory is
 * left out: one deleted since the branches ran is not a hit.
 */
export function memoriesByIdSql(ids: string[]): RawBuilder<MemoryRow> {
  return sql<MemoryRow>`
    select ${memoryColumns}
      from semantic_memory m
      left join intervention_plans p on p.id = m.project_id
      ${accessJoin}
     where m.id = any (${ids}::varchar[]) and m.archived_at is null`;
}

/**
 * Runs the hybrid search as `hybridSearchSql` would, in three statements: the keyword branch at
 * once, the vector branch as soon as the query's vector is there (`vector` resolves to it, or to
 * undefined: keyword-only), each on a connection of its own, then the hits' memories. The keyword
 * branch needs no vector: it runs while the query is embedded, and beside the vector branch, not
 * before it (30,000 memories in one project: the one statement 7.4-7.7 ms at p50; the branches
 * 3.3 and 3.5 ms, 5.8-6.0 side by side).
 */
export async function searchMemories(
  db: Kysely<Database>,
  params: Omit<SearchParams, 'vector'>,
  vector: Promise<SearchParams['vector']> | SearchParams['vector'],
): Promise<SearchHit[]> {
  // Written into the statements' text (see SearchParams.k).
  if (!Number.isSafeInteger(params.k) || params.k < 1) throw new Error(`bad candidate count ${params.k}`);
  const keyword = keywordRanksSql(params).execute(db);
  // Awaited below, after the vector: until then a failure must not count as unhandled.
  keyword.catch(() => {});
  const values = await vector;
  const p: SearchParams = { ...params, vector: values };
  const [kw, vec] = await Promise.all([
    keyword.then((r) => r.rows.map((c) => ({ id: c.id, score: Number(c.score), r: Number(c.r) }))),
    values
      ? vectorRanksSql(p, values)
          .execute(db)
          .then((r) => r.rows.map((c) => ({ id: c.id, distance: Number(c.distance), r: Number(c.r) })))
      : [],
  ]);
  const fused = fuseRanks(kw, vec, p);
  if (fused.length === 0) return [];
  const { rows } = await memoriesByIdSql(fused.map((f) => f.id)).execute(db);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return fused.flatMap((f) => {
    const row = byId.get(f.id);
    return row ? [{ ...row, ...f }] : [];
  });
}
