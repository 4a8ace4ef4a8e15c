import { sql, type RawBuilder } from 'kysely';
import { tsqueryTerm } from '../../tsquery.js';
import type { SearchParams } from './search-params.js';

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
/**
 * A question whose rarest word is in more memories than this is all common words: its candidates
 * are the memories with most of its PAIR_WORDS rarest words (see kw_fetch), not all with the rarest.
 */
const CROWDED_DF = 150;
/**
 * The most memories each tier of a crowded question fetches. Every one is a heap read and a scoring
 * pass: at 100,000 memories in one project every question of the DevStream workload is crowded, and
 * its first tier held 150-600 (keyword statement alone, mean 4.0 ms at 600, 2.5 at 200). They all
 * have the tier's words, though not the same BM25 scores, and they are the first in the heap's order
 * (in a large project, mostly the oldest); the second tier's come pair by pair, the rarest pair
 * first. LoCoMo in one project (`bench:memory -- --quality --one-project`, where many questions are
 * crowded) scores the same at 600 and 200 (keyword R@10 / MRR 0.665 / 0.508), and 0.664 / 0.508 at
 * 150. `bench/research/keyword-tiers.ts` measures how far the cap moves a question's top 10.
 */
const CROWDED_CAP = 200;
/** How many of a question's rarest words the tiers of a crowded question combine. */
const PAIR_WORDS = 4;
/** A keyword (weight A) occurrence counts as this many content occurrences. */
const KEYWORD_TF = 3;

/**
 * The keyword statistics a search needs: its words (kw_words), their document frequencies and the
 * totals (kw_counts: compacted counts plus the deltas not folded in yet), and the scope's size and
 * average length (kw_stats). The vector branch reads kw_stats too (its scope).
 */
export function keywordStatsSql(p: SearchParams): RawBuilder<unknown> {
  const projectKey = scopeKey(p);
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
    )`;
}

/** The statistics' rows of the search's scope: its project's, or every project's. */
function scopeKey(p: SearchParams): (column: RawBuilder<unknown>) => RawBuilder<unknown> {
  return (column) =>
    p.filters.project === undefined
      ? sql`true`
      : sql`${column} = coalesce((select id from intervention_plans where lower(title) = lower(${p.filters.project})), '-')`;
}

/**
 * kw_stats with the scope's size (n) only: what the vector branch reads when it runs on its own,
 * without looking up the query's words (see keywordStatsSql).
 */
export function scopeSizeSql(p: SearchParams): RawBuilder<unknown> {
  const projectKey = scopeKey(p);
  return sql`
    kw_stats as (
      select coalesce(sum(n), 0)::float8 as n
        from (select df as n from memory_lexeme_df where lexeme = ' docs' and ${projectKey(sql`project_key`)}
              union all
              select delta from memory_lexeme_delta where lexeme = ' docs' and ${projectKey(sql`project_key`)}) c
    )`;
}

/**
 * The keyword branch: BM25+ over the tsvector, document frequencies from memory_lexeme_df (+ deltas),
 * ending in kw_ranked (id, score, r): the final score (with session context) and its rank.
 */
export function keywordBranchSql(p: SearchParams, where: RawBuilder<unknown>): RawBuilder<unknown> {
  /**
   * A keyword occurrence counts KEYWORD_TF times: a candidate's query words at keyword positions
   * (kw_keyed.v) are concatenated KEYWORD_TF - 1 times before all of their positions, and one unnest
   * counts them (tsvector || shifts the right-hand positions past the left's, so none merge). It
   * replaced a left join of a second unnest, a hash table built per candidate: on 300 of the DevStream
   * workload's questions, the same rankings and scores, and the keyword statement's mean 2.97 → 2.66 ms
   * at 10,000 memories in one project, 4.21 → 3.86 at 100,000 (old and new alternating). The sum is a
   * tsvector: it keeps at most 256 positions of a word (a tf BM25 has long saturated at) and none past
   * 16,383, so only a memory of some 16,000 words or more counts fewer of a word's last occurrences.
   */
  const keyedTimes = sql.join(
    Array.from({ length: KEYWORD_TF - 1 }, () => sql`kw_keyed.v`),
    sql` || `,
  );
  // Each lexeme quoted for tsquery input: any text is safe.
  const orQuery = (filter: RawBuilder<unknown>) =>
    sql`(string_agg(${tsqueryTerm(sql.ref('lex'))}, ' | ') filter (where ${filter}))::tsquery`;
  return sql`
    ${keywordStatsSql(p)}, kw_df as (
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
             ${orQuery(sql`fetches`)} as any_word,
             array_agg(lex) as words,
             (select (string_agg(${tsqueryTerm(sql.ref('lex'))}, ' & '))::tsquery
                from kw_df where df_rank <= ${sql.lit(PAIR_WORDS)}) as all_rare,
             (select (string_agg(${tsqueryTerm(sql.ref('a.lex'))} || ' & ' || ${tsqueryTerm(sql.ref('b.lex'))}, ' | '))::tsquery
                from kw_df a join kw_df b on a.df_rank < b.df_rank
               where b.df_rank <= ${sql.lit(PAIR_WORDS)}) as pairs,
             (select min(df) from kw_df) > ${sql.lit(CROWDED_DF)} as crowded
        from kw_lexemes
    ), kw_fetch as (
      -- What fetches candidates, in tiers: the next tier only while fewer than k were found. When
      -- even the rarest word of the question is in more than CROWDED_DF memories (every word is
      -- common), the tiers are the memories with all of its PAIR_WORDS rarest words, then with two of
      -- them, then with the rarest: more words matched outrank fewer (scores are multiplied by the
      -- words matched), and the candidates stay few however large the project grows. Otherwise the
      -- rare words, then any word.
      -- A crowded question's tiers stop at the search's limit (its hits all have the most words) and
      -- hold at most CROWDED_CAP memories each (the first the index gives: see CROWDED_CAP).
      select case when crowded then all_rare else selective end as first,
             case when crowded then pairs else any_word end as second,
             case when crowded then selective end as third,
             case when crowded then ${p.limit}::int else ${sql.lit(p.k)} end as enough,
             case when crowded then ${sql.lit(CROWDED_CAP)} end as cap
        from kw_query
    ), kw_pairs as (
      -- A crowded question's pairs of its PAIR_WORDS rarest words, the rarest pair first (the highest
      -- sum of IDFs: its memories score highest), each with the pairs before it (before).
      select ord, q, (string_agg(pair, ' | ') over (order by ord rows between unbounded preceding and 1 preceding))::tsquery as before
        from (select row_number() over (order by qa.idf + qb.idf desc, a.df_rank, b.df_rank) as ord, p.pair, p.pair::tsquery as q
                from kw_df a join kw_df b on a.df_rank < b.df_rank
                join kw_lexemes qa on qa.lex = a.lex join kw_lexemes qb on qb.lex = b.lex
               cross join lateral (select ${tsqueryTerm(sql.ref('a.lex'))} || ' & ' || ${tsqueryTerm(sql.ref('b.lex'))} as pair) p
               where b.df_rank <= ${sql.lit(PAIR_WORDS)}) x
    ), kw_first as (
      select m.id, m.fts, m.project_id, m.project_seq from semantic_memory m
       where m.fts @@ (select first from kw_fetch) and ${where}
       limit (select cap from kw_fetch)
    ), kw_second_queries as (
      -- The second tier's index scans, in order: a crowded question's pairs of words one at a time,
      -- the pair of the highest IDFs first (see kw_pairs), else its words at once (one scan).
      select 0 as ord, second as q, null::tsquery as before from kw_fetch where not (select crowded from kw_query)
      union all
      select ord, q, before from kw_pairs where (select crowded from kw_query)
    ), kw_second as (
      -- Each later tier is evaluated once, and only when the tiers before it found too few. Its scans
      -- run in order, each only while the tier holds fewer than its cap: one scan of all the pairs at
      -- once built the bitmap of every memory with any two of the words (at 100,000 memories in one
      -- project, 7,262 of them in 10 ms for the 200 kept), a pair of them alone is one posting list's
      -- walk (201 in 0.6 ms). A memory an earlier pair found is not found again.
      select m.id, m.fts, m.project_id, m.project_seq
        from (select q, before from kw_second_queries order by ord) t
       cross join lateral (
         select m.id, m.fts, m.project_id, m.project_seq from semantic_memory m
          where m.fts @@ t.q and not coalesce(m.fts @@ (select first from kw_fetch), false)
            and not coalesce(m.fts @@ t.before, false) and ${where}
          limit (select cap from kw_fetch)) m
       where (select count(*) from kw_first) < (select enough from kw_fetch)
       limit (select cap from kw_fetch)
    ), kw_third as (
      select m.id, m.fts, m.project_id, m.project_seq from semantic_memory m
       where (select count(*) from kw_first) + (select count(*) from kw_second) < (select enough from kw_fetch)
         and m.fts @@ (select third from kw_fetch)
         and not coalesce(m.fts @@ (select first from kw_fetch) or m.fts @@ (select second from kw_fetch), false)
         and ${where}
       limit (select cap from kw_fetch)
    ), kw_terms as (
      -- A candidate's query words only, not all of its lexemes: setweight marks them (weight C, which
      -- the stored vectors never use) and ts_filter keeps them, in C, before anything is unnested
      -- (a third of the cost of unnesting it whole); kw_keyed is the same over its keyword (weight A)
      -- positions, put before it KEYWORD_TF - 1 times (see keyedTimes).
      select c.id, c.project_id, c.project_seq, length(c.fts)::float8 as dl, q.idf,
             array_length(u.positions, 1)::float8 as tf
        from (select * from kw_first union all select * from kw_second union all select * from kw_third) c
       cross join kw_query w
       -- offset 0: computed once a candidate, not at each of its uses.
       cross join lateral (select ts_filter(setweight(ts_filter(c.fts, '{a}'), 'C', w.words), '{c}') as v offset 0) kw_keyed
       cross join lateral unnest(${keyedTimes} || ts_filter(setweight(c.fts, 'C', w.words), '{c}')) u
        join kw_lexemes q on q.lex = u.lexeme
    ), kw_scored as (
      -- BM25+, times the number of query words matched: memories with more of the words come first.
      select t.id, t.project_id, t.project_seq,
             count(*) * sum(t.idf * (${sql.lit(BM25.delta)} + t.tf * ${sql.lit(BM25.k1 + 1)}
                                     / (t.tf + ${sql.lit(BM25.k1)} * (${sql.lit(1 - BM25.b)} + ${sql.lit(BM25.b)} * t.dl / st.avgdl)))) as score
        from kw_terms t cross join kw_stats st
       group by t.id, t.project_id, t.project_seq
    ), ${neighbourSql(p)}, kw_ranked as (
      select id, score, row_number() over (order by score desc, id) as r from kw_final
    )`;
}

/** Neighbours on each side: places in the project's order of storing (project_seq). */
const NEIGHBOURS = 2;

/**
 * Session context: memories stored one after another in a project usually belong to one piece of
 * work (an agent's session, a task), so each keyword candidate gains `neighbours` × the scores of
 * the candidates stored up to NEIGHBOURS places before and after it, and at its own place (stores in
 * flight together read the same latest place, so they share the next one). Each place counts once,
 * with its best candidate: a burst of concurrent stores does not multiply the gain. Off when the
 * weight is 0. Only a candidate can add to a score, so the neighbours are found among the candidates,
 * by a hash join on (project, place): no index lookups, so every candidate can gain, not only the top
 * ones (LoCoMo R@10 0.689 → 0.701 against the 200 best; ADR 0003).
 */
function neighbourSql(p: SearchParams): RawBuilder<unknown> {
  if (p.weights.neighbours <= 0) {
    return sql`kw_final as (select id, score from kw_scored order by score desc, id limit ${sql.lit(p.k)})`;
  }
  return sql`
    kw_places as materialized (
      -- Materialized: each place a column, so the join below hashes on (project, place); inlined, the
      -- place is an expression and the planner joins on the project alone, then filters every pair.
      select t.id, t.project_id, t.project_seq + o.place as place
        from kw_scored t cross join generate_series(${sql.lit(-NEIGHBOURS)}::bigint, ${sql.lit(NEIGHBOURS)}::bigint) o(place)
    ), kw_near as (
      select id, sum(score) as score
        from (select w.id, max(s.score) as score
                from kw_places w
                join kw_scored s on s.project_id = w.project_id and s.project_seq = w.place and s.id <> w.id
               group by w.id, w.place) best
       group by id
    ), kw_final as (
      select t.id, t.score + ${p.weights.neighbours}::float8 * coalesce(n.score, 0) as score
        from kw_scored t
        left join kw_near n on n.id = t.id
       order by score desc, t.id
       limit ${sql.lit(p.k)}
    )`;
}
