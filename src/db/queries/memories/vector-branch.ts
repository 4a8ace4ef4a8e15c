import { sql, type RawBuilder } from 'kysely';
import { vectorLiteral } from '../../vector-literal.js';
import { dateFilterParts, filterSql, type SearchFilters } from './search-filters.js';
import type { SearchParams } from './search-params.js';

/**
 * Exact vector search costs about 1.5 µs per memory in scope; the HNSW index with a filter costs
 * about 1.5 ms × (all memories / memories in scope) (pgvector's iterative scan visits that many
 * more nodes to find k that pass). Measured at 100k memories, 768-D. The scope is the project's
 * memories (or all of them), from the keyword statistics, or fewer when a date range holds fewer
 * (counted, up to the bound); the exact branch is chosen when scope² ≤ EXACT_SCAN_RATIO × all. A
 * content type only shrinks the scope by a bounded factor and is not counted.
 */
const EXACT_SCAN_RATIO = 1000;
/**
 * Staged vectors (stored, not yet in the index) a search scans at most: the newest. The worker
 * indexes them within a second or so on Postgres; on PGlite it does so between requests, 7–15 ms a
 * vector, and 10,000 stores in a minute left most of them staged: every search then computed all
 * their distances in WASM (130 ms at p50). Older ones are found by their words until indexed.
 */
const STAGED_SCANNED = 1_000;
/**
 * PGlite's bound: each distance costs ~9 µs in WASM, and fetching and joining the newest staged
 * ~5 µs more (EXPLAIN ANALYZE with 3,000 staged: 16.8 ms for 1,000 of them). Searches during a
 * 3,000-vector backlog (settled 10k store, MCP, p50 / p95): 30.3 / 51.0 ms at 1,000, 21.9 / 35.0 at
 * 300. Its worker indexes ~80 vectors a second when idle: 300 are its last ~4 s of stores.
 */
export const PGLITE_STAGED_SCANNED = 300;

/**
 * The vector branch: cosine distance to the query vector over memories with a vector of the
 * query's model (memory_vectors, migrations/0021), filtered before the limit. Small scopes (a project
 * of a few thousand memories) are scanned exactly, from the covering index of the vectors (an
 * index-only scan); large ones go through the HNSW index of the query's dimension (iterative
 * scan, see client.ts). Both are in the statement; one runs. Vectors still staged in embedding
 * jobs (see insertMemory) are scanned exactly beside either.
 */
export function vectorBranchSql(p: SearchParams, vector: NonNullable<SearchParams['vector']>): RawBuilder<unknown> {
  const where = filterSql(p.filters);
  const dims = sql.lit(vector.dims);
  // The query vector, sent and parsed once (vec_query): written out at each of its four uses, its
  // ~5 KB of text went four times into every search's Bind message and halfvec_in.
  const query = sql`(select q from vec_query)`;
  // Half precision, as the vectors are stored (migrations/0005): the HNSW index's own expression.
  const distance = sql`v.embedding::halfvec(${dims}) <=> ${query}`;
  const ofModel = (alias: 'v' | 'm') =>
    sql`${sql.ref(`${alias}.embedding_dims`)} = ${dims} and ${sql.ref(`${alias}.embedding_model`)} = ${vector.model}`;
  const scoped = (filters: RawBuilder<unknown>) => sql`${ofModel('v')} and ${filters}`;
  // A date range shrinks the scope too (searching last week's notes in a year of them).
  const dated = datedCountSql(p.filters);
  const scope = dated ? sql`least(st.n, ${dated})` : sql`st.n`;
  return sql`
    vec_query as (
      select ${vectorLiteral(vector.values)}::halfvec(${dims}) as q
    ), vec_total as (
      select coalesce(sum(n), 0) as n
        from (select df as n from memory_lexeme_df where lexeme = ' docs'
              union all select delta from memory_lexeme_delta where lexeme = ' docs') a
    ), vec_scope as (
      select ${scope} ^ 2 <= ${sql.lit(EXACT_SCAN_RATIO)} * t.n as exact
        from kw_stats st cross join vec_total t
    ), vec as materialized (
      -- The subquery is a fence (offset 0): the HNSW index cannot serve the order, so the planner
      -- scans the scope, and each distance is computed once.
      (select id, distance from (
         select v.memory_id as id, ${distance} as distance from memory_vectors v
          where (select exact from vec_scope) and ${scoped(filterSql(p.filters, { scopeIndex: true, vectors: true }))}
         offset 0) scope
        order by distance
        limit ${sql.lit(p.k)})
      union all
      (select v.memory_id as id, ${distance} as distance from memory_vectors v
        where not (select exact from vec_scope) and ${scoped(filterSql(p.filters, { indexable: false, vectors: true }))}
        order by ${distance}
        limit ${sql.lit(p.k)})
      union all
      -- Vectors stored but not yet moved into memory_vectors (and the index) by the worker: usually
      -- few, scanned exactly; after a burst of stores the newest p.staged of them (STAGED_SCANNED).
      (select m.id, j.embedding::halfvec(${dims}) <=> ${query} as distance
         from (select memory_id, embedding from embedding_jobs where embedding is not null
                order by created_at desc limit ${sql.lit(p.staged ?? STAGED_SCANNED)}) j
         join semantic_memory m on m.id = j.memory_id
        where ${ofModel('m')} and ${where})
    ), vec_ranked as (
      select id, distance, r from (select id, distance, row_number() over (order by distance, id) as r from vec) v
       where r <= ${sql.lit(p.k)}
    )`;
}

/**
 * How many memories a date range holds, as far as the choice between the exact scan and the index
 * needs (vec_scope; `t` is vec_total): counted through the created_at index, up to the largest
 * scope scanned exactly (√(EXACT_SCAN_RATIO × all) + 1). A range open on one side that leaves out
 * few memories ("since last month" in a younger store) is counted from the other side: the
 * memories outside it, up to a tenth of that bound, taken from all. Only when there are more of
 * those is the range itself counted. Counting the 10,001 memories a range held at 100,000 took
 * 1.7 ms of every such search, which then went to the index anyway.
 */
function datedCountSql(f: SearchFilters): RawBuilder<unknown> | undefined {
  const inside = dateFilterParts(f, sql`d.created_at`);
  if (inside.length === 0) return undefined;
  const count = (where: RawBuilder<unknown>, limit: RawBuilder<unknown>) =>
    sql`(select count(*) from (select 1 from semantic_memory d where d.archived_at is null and ${where}
                                 limit ${limit}) c)`;
  const bound = sql`floor(sqrt(${sql.lit(EXACT_SCAN_RATIO)} * t.n))::bigint + 1`;
  const forward = count(sql.join(inside, sql` and `), sql`(select ${bound})`);
  const outside =
    f.created_before === undefined
      ? sql`d.created_at < ${f.created_after}::timestamptz`
      : f.created_after === undefined
        ? sql`d.created_at >= ${f.created_before}::timestamptz`
        : undefined;
  if (!outside) return forward;
  const few = sql`(select (${bound}) / 10 + 1)`;
  return sql`(select case when o.n < ${few} then t.n - o.n else ${forward} end from (select ${count(outside, few)} as n offset 0) o)`;
}
