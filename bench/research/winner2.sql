-- Keyword branch v2: BM25+ with df/N/avgdl from trigger-maintained stats tables, and MaxScore-style pruning:
-- candidates come only from "selective" lexemes (df <= 5% of N); frequent lexemes still score.
-- If the selective candidates are fewer than k, a one-time-filtered fallback adds rows matching only frequent lexemes.
-- $1 query text, $2 project_id (NULL = all projects), $3 k,
-- $4 content_type[] (NULL = any), $5 created_from, $6 created_to, $7 keywords[] (NULL = no filter)
WITH st AS (
  SELECT coalesce(sum(n_docs), 0)::float8 AS n,
         coalesce(sum(sum_len)::float8 / nullif(sum(n_docs), 0), 15) AS avgdl
  FROM kw_project_stats WHERE $2::varchar IS NULL OR project_id = $2
),
ql AS (                                   -- distinct query lexemes + idf (empty for ''/stopwords/punctuation)
  SELECT l.lex,
         ln(1 + (st.n - d.df + 0.5) / (d.df + 0.5)) AS idf,
         d.df <= 0.05 * st.n AS selective
  FROM unnest(tsvector_to_array(to_tsvector('english', $1))) AS l(lex)
  CROSS JOIN st
  CROSS JOIN LATERAL (SELECT coalesce(sum(x.df), 0)::float8 AS df FROM kw_lexeme_df x
                      WHERE x.lexeme = l.lex AND ($2::varchar IS NULL OR x.project_id = $2)) d
),
tq AS (                                   -- quoted OR-tsqueries; NULL when no lexemes
  SELECT ('''' || string_agg(replace(replace(lex, '\', '\\'), '''', ''''''), ''' | ''')
                 FILTER (WHERE selective OR NOT EXISTS (SELECT 1 FROM ql WHERE selective)) || '''')::tsquery AS sel,
         ('''' || string_agg(replace(replace(lex, '\', '\\'), '''', ''''''), ''' | ''') || '''')::tsquery AS alll
  FROM ql
),
cand AS (
  SELECT m.id, m.fts FROM semantic_memory m
  WHERE m.fts @@ (SELECT sel FROM tq)
    AND ($2::varchar IS NULL OR m.project_id = $2) AND m.archived_at IS NULL
    AND ($4::varchar[] IS NULL OR m.content_type = ANY ($4))
    AND ($5::timestamptz IS NULL OR m.created_at >= $5) AND ($6::timestamptz IS NULL OR m.created_at < $6)
    AND ($7::text[] IS NULL OR m.keywords && $7)
),
cand_fb AS (                              -- evaluated only when cand is short (InitPlan one-time filter)
  SELECT m.id, m.fts FROM semantic_memory m
  WHERE (SELECT count(*) FROM cand) < $3
    AND m.fts @@ (SELECT alll FROM tq) AND NOT m.fts @@ (SELECT sel FROM tq)
    AND ($2::varchar IS NULL OR m.project_id = $2) AND m.archived_at IS NULL
    AND ($4::varchar[] IS NULL OR m.content_type = ANY ($4))
    AND ($5::timestamptz IS NULL OR m.created_at >= $5) AND ($6::timestamptz IS NULL OR m.created_at < $6)
    AND ($7::text[] IS NULL OR m.keywords && $7)
),
tf AS (
  SELECT c.id, length(c.fts)::float8 AS dl, ql.idf, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
  FROM (SELECT * FROM cand UNION ALL SELECT * FROM cand_fb) c
  CROSS JOIN LATERAL unnest(c.fts) u JOIN ql ON ql.lex = u.lexeme
)
SELECT tf.id,
       count(*) * sum(tf.idf * (0.5 + tf.tf * 2.2 / (tf.tf + 1.2 * (0.7 + 0.3 * tf.dl / st.avgdl)))) AS r
FROM tf CROSS JOIN st
GROUP BY tf.id
ORDER BY r DESC, tf.id
LIMIT $3
