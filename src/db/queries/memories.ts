import { sql, type Kysely, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import { runPrepared } from '../client.js';
import type { ContentType, Database, MemoryAccessTable, SemanticMemoryTable } from '../schema.js';
import { RRF_K } from '../../domain/rank-fusion.js';
import { tsqueryTerm } from '../tsquery.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The columns a memory is read back with (not the vector, not the tsvector). */
type MemoryColumn =
  | 'id'
  | 'task_id'
  | 'content'
  | 'content_type'
  | 'content_format'
  | 'keywords'
  | 'importance_score'
  | 'source'
  | 'embedding_model'
  | 'embedding_dims'
  | 'created_by'
  | 'created_at';

/** A memory as read back: those columns, its project's title and its access counts. */
export type MemoryRow = Pick<Selectable<SemanticMemoryTable>, MemoryColumn> &
  Pick<Selectable<MemoryAccessTable>, 'access_count' | 'last_accessed_at'> & { project: string | null };

/** Selects a MemoryRow from `m` (semantic_memory), `p` (its plan) and `a` (see accessJoin). */
const memoryColumns = sql`m.id, p.title as project, m.task_id, m.content, m.content_type, m.content_format, m.keywords,
  m.importance_score, m.source, m.embedding_model, m.embedding_dims, coalesce(a.access_count, 0) as access_count,
  a.last_accessed_at, m.created_by, m.created_at`;
const accessJoin = sql`left join memory_access a on a.memory_id = m.id`;

/** pgvector's text form of a vector. */
export function vectorLiteral(vector: readonly number[]): string {
  return `[${vector.join(',')}]`;
}

export type NewMemory = Pick<
  SemanticMemoryTable,
  | 'id'
  | 'task_id'
  | 'content'
  | 'content_type'
  | 'content_format'
  | 'keywords'
  | 'importance_score'
  | 'content_hash'
  | 'source'
  | 'created_by'
> & {
  /** Exact project title, case-insensitive; it must exist (see insertMemory). */
  project: string;
  /**
   * The memory's vector: staged in its embedding job (the row gets the model and dimensions now,
   * the worker moves the vector into the row and the HNSW index; searches see staged vectors).
   */
  embedding: { vector: number[]; model: string; dims: number } | null;
  /** Queue the memory for the embedding worker when it has no vector but should get one. */
  enqueue: boolean;
};

export type InsertOutcome =
  { kind: 'inserted'; memory: MemoryRow } | { kind: 'duplicate'; memory: MemoryRow } | { kind: 'no-project' };

/**
 * Stores a memory in one statement: into the project titled `project` (case-insensitive), with its
 * vector staged or queued for embedding when asked, unless the same content is already stored in
 * that project, in which case the existing memory comes back as a duplicate. Writes nothing when
 * the project does not exist.
 */
export async function insertMemory(db: Db, m: NewMemory): Promise<InsertOutcome> {
  const staged = m.embedding ? sql`${vectorLiteral(m.embedding.vector)}::halfvec` : sql`null::halfvec`;
  const insert = sql<{ project_id: string | null } & Partial<MemoryRow>>`
    with target as (
      select id, title from intervention_plans where lower(title) = lower(${m.project})
    ), ins as (
      insert into semantic_memory (id, project_id, task_id, content, content_type, content_format, keywords,
                                   importance_score, content_hash, source, embedding, embedding_model,
                                   embedding_dims, created_by)
      select ${m.id}, target.id, ${m.task_id}, ${m.content}, ${m.content_type}, ${m.content_format},
             ${m.keywords}::text[], ${m.importance_score}, ${m.content_hash}, ${m.source}, null,
             ${m.embedding?.model ?? null}, ${m.embedding?.dims ?? null}, ${m.created_by}
        from target
      on conflict (coalesce(project_id, ''), content_hash) where archived_at is null do nothing
      returning *
    ), job as (
      insert into embedding_jobs (memory_id, embedding) select id, ${staged} from ins where ${m.enqueue || m.embedding !== null}
    )
    select target.id as project_id, target.title as project, ins.id, ins.task_id, ins.content, ins.content_type,
           ins.content_format, ins.keywords, ins.importance_score, ins.source, ins.embedding_model, ins.embedding_dims,
           0 as access_count, null::timestamptz as last_accessed_at, ins.created_by, ins.created_at
      from (select 1) as one
      left join target on true
      left join ins on true`;
  const [outcome] = await runPrepared(db, insert.compile(db));
  if (!outcome?.project_id) return { kind: 'no-project' };
  if (outcome.id) {
    const { project_id: _, ...memory } = outcome;
    return { kind: 'inserted', memory: memory as MemoryRow };
  }
  const existing = await findByHash(db, outcome.project_id, m.content_hash);
  if (!existing) throw new Error('a duplicate memory was reported but none was found');
  return { kind: 'duplicate', memory: existing };
}

/** The live memory with this content in this project (by title, case-insensitive), if any. */
export async function findDuplicate(db: Db, project: string, contentHash: string): Promise<MemoryRow | undefined> {
  const query = sql<MemoryRow>`
    select ${memoryColumns}
      from intervention_plans p
      join semantic_memory m on coalesce(m.project_id, '') = p.id   -- the dedup key's expression: its index answers
      ${accessJoin}
     where lower(p.title) = lower(${project}) and m.content_hash = ${contentHash} and m.archived_at is null`;
  const [row] = await runPrepared(db, query.compile(db));
  return row;
}

async function findByHash(db: Db, projectId: string, contentHash: string): Promise<MemoryRow | undefined> {
  const result = await sql<MemoryRow>`
    select ${memoryColumns}
      from semantic_memory m left join intervention_plans p on p.id = m.project_id ${accessJoin}
     where coalesce(m.project_id, '') = ${projectId} and m.content_hash = ${contentHash} and m.archived_at is null`.execute(
    db,
  );
  return result.rows[0];
}

/** A live (not deleted) memory. */
export async function getMemory(db: Db, id: string): Promise<MemoryRow | undefined> {
  const result = await sql<MemoryRow>`
    select ${memoryColumns}
      from semantic_memory m left join intervention_plans p on p.id = m.project_id ${accessJoin}
     where m.id = ${id} and m.archived_at is null`.execute(db);
  return result.rows[0];
}

/**
 * Deletes a memory: the row stays as a tombstone (id, author, dates) but its content, keywords,
 * hash and vector are erased, so a secret stored by mistake is gone. False when no live memory has this id.
 */
export async function deleteMemory(db: Db, id: string): Promise<boolean> {
  const result = await sql`
    with del as (
      update semantic_memory
         set archived_at = now(), content = '', keywords = '{}', content_hash = '',
             embedding = null, embedding_model = null, embedding_dims = null
       where id = ${id} and archived_at is null
      returning id
    ), job as (
      delete from embedding_jobs where memory_id in (select id from del)
    ), access as (
      delete from memory_access where memory_id in (select id from del)
    )
    select id from del`.execute(db);
  return result.rows.length > 0;
}

export interface SearchFilters {
  /** Exact project title, case-insensitive; an unknown project matches nothing. */
  project?: string | undefined;
  content_type?: ContentType | undefined;
  /** Memories carrying every one of these keywords (stored lowercase). */
  keywords?: string[] | undefined;
  created_after?: string | undefined;
  created_before?: string | undefined;
}

export interface SearchParams {
  query: string;
  filters: SearchFilters;
  limit: number;
  /**
   * Candidates per branch. Written into the statement's text (a literal, unlike the other values):
   * with a known LIMIT the planner costs the generic plan right and picks it, so a project's
   * search is planned once per connection instead of on every call (~2.5 ms saved, 100k memories).
   * Callers keep the number of distinct values small: each is a prepared statement per connection.
   */
  k: number;
  /** Absent: keyword-only. */
  vector?: { values: number[]; model: string; dims: number } | undefined;
  /** RRF weights of the branches; `neighbours`: share of the neighbours' keyword scores a hit gains. */
  weights: { vector: number; keyword: number; neighbours: number };
}

export interface SearchHit extends MemoryRow {
  rrf_score: number;
  vector_rank: number | null;
  keyword_rank: number | null;
  distance: number | null;
}

/**
 * The filters as one SQL condition on `m`, applied inside each branch before its LIMIT. With
 * `indexable: false` each test is written so that no b-tree or GIN index can serve it (same
 * result): the HNSW branch must stay on the HNSW index even in a generic plan, where the planner
 * cannot see how selective the parameters are.
 */
function filterSql(f: SearchFilters, { indexable = true } = {}): RawBuilder<unknown> {
  const col = (name: string, type: string) =>
    indexable ? sql.ref(`m.${name}`) : sql`(${sql.ref(`m.${name}`)} ${sql.raw(type)})`;
  const parts: RawBuilder<unknown>[] = [sql`m.archived_at is null`];
  if (f.project !== undefined) {
    parts.push(
      sql`${col('project_id', "|| ''")} = (select id from intervention_plans where lower(title) = lower(${f.project}))`,
    );
  }
  if (f.content_type !== undefined) parts.push(sql`${col('content_type', "|| ''")} = ${f.content_type}`);
  if (f.keywords !== undefined && f.keywords.length > 0)
    parts.push(sql`${col('keywords', "|| '{}'::text[]")} @> ${f.keywords}::text[]`);
  parts.push(...dateFilterParts(f, col('created_at', "+ interval '0 s'")));
  const all = sql.join(parts, sql` and `);
  // One opaque condition: the planner guesses half the rows pass it (not 0.5 % per test), so even
  // a generic plan with a known LIMIT finds the index cheaper than a sequential scan and a sort.
  return indexable ? all : sql`coalesce(${all}, false)`;
}

/** The created_after / created_before tests on `column` (none when neither filter is given). */
function dateFilterParts(f: SearchFilters, column: RawBuilder<unknown>): RawBuilder<unknown>[] {
  const parts: RawBuilder<unknown>[] = [];
  if (f.created_after !== undefined) parts.push(sql`${column} >= ${f.created_after}::timestamptz`);
  if (f.created_before !== undefined) parts.push(sql`${column} < ${f.created_before}::timestamptz`);
  return parts;
}

/** BM25+ parameters (tuned on LoCoMo; the optimum is flat: ±0.005 R@10 over k1 0.6–2.2, b 0.3–0.9). */
const BM25 = { k1: 1.2, b: 0.3, delta: 0.5 };
/** Lexemes in more than this share of the memories only add to scores; they do not fetch candidates. */
const SELECTIVE_DF = 0.05;
/**
 * Words fetch candidates rarest first while the memories they can match add up to at most this
 * many (the rarest word always fetches); commoner words only add to the scores of what was fetched.
 * Keeps a search's cost flat as a project grows (every candidate is a heap read and a scoring pass).
 */
const MAX_FETCHED = 600;
/** A keyword (weight A) occurrence counts as this many content occurrences. */
const KEYWORD_TF = 3;

/** The keyword branch: BM25+ over the tsvector, document frequencies from memory_lexeme_df (+ deltas). */
function keywordBranchSql(p: SearchParams, where: RawBuilder<unknown>): RawBuilder<unknown> {
  const projectKey = (column: RawBuilder<unknown>) =>
    p.filters.project === undefined
      ? sql`true`
      : sql`${column} = coalesce((select id from intervention_plans where lower(title) = lower(${p.filters.project})), '-')`;
  // Each lexeme quoted for tsquery input: any text is safe.
  const orQuery = (filter: RawBuilder<unknown>) =>
    sql`(string_agg(${tsqueryTerm(sql.ref('lex'))}, ' | ') filter (where ${filter}))::tsquery`;
  return sql`
    kw_words as (
      select lex from unnest(tsvector_to_array(to_tsvector('english', ${p.query}))) as lex
    ), kw_counts as (
      -- Compacted counts plus the deltas the service has not folded in yet (memory_lexeme_delta).
      select lexeme, sum(n)::float8 as n
        from (select lexeme, df as n from memory_lexeme_df
               where lexeme = any (array(select lex from kw_words) || array[' docs', ' len']) and ${projectKey(sql`project_key`)}
              union all
              select lexeme, delta from memory_lexeme_delta
               where lexeme = any (array(select lex from kw_words) || array[' docs', ' len']) and ${projectKey(sql`project_key`)}) c
       group by lexeme
    ), kw_stats as (
      select coalesce((select n from kw_counts where lexeme = ' docs'), 0) as n,
             coalesce((select n from kw_counts where lexeme = ' len') / nullif((select n from kw_counts where lexeme = ' docs'), 0), 15) as avgdl
    ), kw_df as (
      select w.lex, coalesce(c.n, 0) as df, st.n,
             -- Memories the rarest words up to this one can fetch (at most): bounds the candidates.
             sum(coalesce(c.n, 0)) over (order by coalesce(c.n, 0), w.lex) as fetched,
             row_number() over (order by coalesce(c.n, 0), w.lex) as df_rank
        from kw_words w cross join kw_stats st left join kw_counts c on c.lexeme = w.lex
    ), kw_lexemes as (
      select lex, ln(1 + (n - df + 0.5) / (df + 0.5)) as idf,
             df_rank = 1 or fetched <= ${sql.lit(MAX_FETCHED)} as fetches,
             df <= ${sql.lit(SELECTIVE_DF)} * n as selective
        from kw_df
    ), kw_query as (
      select ${orQuery(sql`fetches and (selective or not exists (select 1 from kw_lexemes where selective))`)} as selective,
             ${orQuery(sql`fetches`)} as any_word
        from kw_lexemes
    ), kw_candidates as (
      select m.id, m.fts, m.project_id, m.created_at from semantic_memory m
       where m.fts @@ (select selective from kw_query) and ${where}
    ), kw_more as (
      -- Evaluated once, and only when the rare words found fewer than k memories.
      select m.id, m.fts, m.project_id, m.created_at from semantic_memory m
       where (select count(*) from kw_candidates) < ${sql.lit(p.k)}
         and m.fts @@ (select any_word from kw_query) and not m.fts @@ (select selective from kw_query) and ${where}
    ), kw_terms as (
      select c.id, c.project_id, c.created_at, length(c.fts)::float8 as dl, q.idf,
             (coalesce(array_length(u.positions, 1), 1)
               + ${sql.lit(KEYWORD_TF - 1)} * cardinality(array_positions(u.weights, 'A')))::float8 as tf
        from (select * from kw_candidates union all select * from kw_more) c
       cross join lateral unnest(c.fts) u
        join kw_lexemes q on q.lex = u.lexeme
    ), kw_scored as (
      -- BM25+, times the number of query words matched: memories with more of the words come first.
      select t.id, t.project_id, t.created_at,
             count(*) * sum(t.idf * (${sql.lit(BM25.delta)} + t.tf * ${sql.lit(BM25.k1 + 1)}
                                     / (t.tf + ${sql.lit(BM25.k1)} * (${sql.lit(1 - BM25.b)} + ${sql.lit(BM25.b)} * t.dl / st.avgdl)))) as score
        from kw_terms t cross join kw_stats st
       group by t.id, t.project_id, t.created_at
    ), ${neighbourSql(p)}, kw_ranked as (
      select id, row_number() over (order by score desc, id) as r from kw_final
    )`;
}

/** How many top keyword hits look at their neighbours (bounded work: two index probes each). */
const NEIGHBOUR_POOL = 200;
/** Neighbours on each side, in the order memories were stored in their project. */
const NEIGHBOURS = 2;

/**
 * Session context: memories stored one after another in a project usually belong to one piece of
 * work (an agent's session, a task), so each of the top keyword hits gains `neighbours` × the
 * scores of the matching memories stored just before and after it. Off when the weight is 0.
 */
function neighbourSql(p: SearchParams): RawBuilder<unknown> {
  if (p.weights.neighbours <= 0) {
    return sql`kw_final as (select id, score from kw_scored order by score desc, id limit ${sql.lit(p.k)})`;
  }
  const side = (op: RawBuilder<unknown>, order: RawBuilder<unknown>) => sql`
    (select y.id from semantic_memory y
      where y.project_id = tm.project_id and y.archived_at is null and (y.created_at, y.id) ${op} (tm.created_at, tm.id)
      order by ${order} limit ${sql.lit(NEIGHBOURS)})`;
  return sql`
    kw_top as (
      select id, score, project_id, created_at from kw_scored order by score desc, id limit ${sql.lit(NEIGHBOUR_POOL)}
    ), kw_neighbours as materialized (
      -- Materialized: the planner, guessing kw_scored small, would otherwise rescan it per top hit.
      select tm.id, n.id as neighbour
        from kw_top tm
       cross join lateral (${side(sql`<`, sql`y.created_at desc, y.id desc`)} union all ${side(sql`>`, sql`y.created_at, y.id`)}) n
    ), kw_final as (
      select t.id, t.score + ${p.weights.neighbours}::float8 * coalesce(sum(s.score), 0) as score
        from kw_top t
        left join kw_neighbours nb on nb.id = t.id
        left join kw_scored s on s.id = nb.neighbour
       group by t.id, t.score
       order by score desc, t.id
       limit ${sql.lit(p.k)}
    )`;
}

/**
 * Hybrid search in one statement (design.md §5): a vector branch (cosine distance, rows of the
 * query's model only; see vectorBranchSql) and a keyword branch (BM25+ over Postgres full text: any
 * word of the query matches, memories with more of its words rank first), each filtered before its
 * LIMIT, fused by reciprocal rank (RRF_K).
 */
export function hybridSearchSql(p: SearchParams): RawBuilder<SearchHit> {
  if (!Number.isSafeInteger(p.k) || p.k < 1) throw new Error(`bad candidate count ${p.k}`);
  const where = filterSql(p.filters);
  return sql<SearchHit>`
    with ${keywordBranchSql(p, where)}, ${p.vector ? vectorBranchSql(p, p.vector, where) : sql`vec_ranked as (select null::varchar as id, null::float8 as distance, null::bigint as r where false)`}, fused as (
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
 * The vector branch: cosine distance to the query vector over memories with a vector of the
 * query's model, filtered before the limit. Small scopes (a project of a few thousand memories)
 * are scanned exactly, through the filter index; large ones go through the HNSW index of the
 * query's dimension (iterative scan, see client.ts). Both are in the statement; one runs. Vectors
 * still staged in embedding jobs (see insertMemory) are scanned exactly beside either.
 */
function vectorBranchSql(
  p: SearchParams,
  vector: NonNullable<SearchParams['vector']>,
  where: RawBuilder<unknown>,
): RawBuilder<unknown> {
  const dims = sql.lit(vector.dims);
  const literal = vectorLiteral(vector.values);
  // Half precision, as the vectors are stored (migrations/0005): the HNSW index's own expression.
  const distance = sql`m.embedding::halfvec(${dims}) <=> ${literal}::halfvec(${dims})`;
  const ofModel = sql`m.embedding_dims = ${dims} and m.embedding_model = ${vector.model}`;
  const scoped = (filters: RawBuilder<unknown>) => sql`${ofModel} and m.embedding is not null and ${filters}`;
  // A date range shrinks the scope too (searching last week's notes in a year of them): its
  // memories are counted through the created_at index, up to the largest scope scanned exactly.
  const dates = dateFilterParts(p.filters, sql`d.created_at`);
  const scope =
    dates.length === 0
      ? sql`st.n`
      : sql`least(st.n, (select count(*) from (
               select 1 from semantic_memory d where d.archived_at is null and ${sql.join(dates, sql` and `)}
                limit (select floor(sqrt(${sql.lit(EXACT_SCAN_RATIO)} * t.n))::bigint + 1)) dated))`;
  return sql`
    vec_total as (
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
         select m.id, ${distance} as distance from semantic_memory m
          where (select exact from vec_scope) and ${scoped(where)}
         offset 0) scope
        order by distance
        limit ${sql.lit(p.k)})
      union all
      (select m.id, ${distance} as distance from semantic_memory m
        where not (select exact from vec_scope) and ${scoped(filterSql(p.filters, { indexable: false }))}
        order by ${distance}
        limit ${sql.lit(p.k)})
      union all
      -- Vectors stored but not yet moved into their rows (and the index) by the worker: few, exact.
      (select m.id, j.embedding::halfvec(${dims}) <=> ${literal}::halfvec(${dims}) as distance
         from embedding_jobs j join semantic_memory m on m.id = j.memory_id
        where j.embedding is not null and m.embedding is null and ${ofModel} and ${where})
    ), vec_ranked as (
      select id, distance, r from (select id, distance, row_number() over (order by distance, id) as r from vec) v
       where r <= ${sql.lit(p.k)}
    )`;
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

/** pgvector's HNSW indexes `halfvec` up to this many dimensions; beyond it, vector search scans. */
export const MAX_INDEXED_DIMS = 4000;
/** A B-tree entry holds a halfvec up to about this many dimensions (see migrations/0009). */
const MAX_SCOPE_INDEXED_DIMS = 1024;

/**
 * Creates the indexes for vectors of this dimension unless they exist (768's ship with the schema):
 * HNSW for large scopes, and the covering B-tree that exact scans of a project read (migrations/0009).
 * Returns false when the dimension is too large for HNSW.
 */
export async function ensureVectorIndex(db: Db, dims: number): Promise<boolean> {
  if (!Number.isInteger(dims) || dims < 1) throw new Error(`bad vector dimension ${dims}`);
  if (dims > MAX_INDEXED_DIMS) return false;
  const d = sql.lit(dims);
  await sql`create index if not exists ${sql.id(`idx_semantic_memory_embedding_${dims}`)} on semantic_memory
            using hnsw ((embedding::halfvec(${d})) halfvec_cosine_ops) where embedding_dims = ${d}`.execute(db);
  if (dims <= MAX_SCOPE_INDEXED_DIMS) {
    await sql`create index if not exists ${sql.id(`idx_semantic_memory_scope_${dims}`)} on semantic_memory (project_id, content_type)
              include (id, created_at, embedding_model, embedding)
              where archived_at is null and embedding is not null and embedding_dims = ${d}`.execute(db);
  }
  return true;
}
