-- Keyword branch: BM25(+) over the OR-of-lexemes candidate set, in one statement.
-- $1 query text, $2 project_id (NULL = all projects), $3 k,
-- $4 content_type[] (NULL = any), $5 created_from (NULL), $6 created_to (NULL), $7 keywords[] (NULL = no filter)
-- Constants: k1 = 1.2, b = 0.3, delta = 0.5 (BM25+), avgdl = 15 lexemes, coord = number of distinct matched query lexemes.
WITH ql AS (                                        -- distinct normalised query lexemes ('' / stopwords / punctuation -> no rows)
  SELECT unnest(tsvector_to_array(to_tsvector('english', $1))) AS lex
),
tq AS (                                             -- safe OR tsquery: each lexeme quoted, \ and ' escaped; NULL when no lexemes
  SELECT ('''' || string_agg(replace(replace(lex, '\', '\\'), '''', ''''''), ''' | ''') || '''')::tsquery AS q
  FROM ql
),
cand AS (                                           -- all filtered rows matching any lexeme (GIN); df is exact over this set
  SELECT m.id, m.fts
  FROM semantic_memory m
  WHERE m.fts @@ (SELECT q FROM tq)
    AND ($2::varchar IS NULL OR m.project_id = $2)
    AND m.archived_at IS NULL
    AND ($4::varchar[] IS NULL OR m.content_type = ANY ($4))
    AND ($5::timestamptz IS NULL OR m.created_at >= $5)
    AND ($6::timestamptz IS NULL OR m.created_at < $6)
    AND ($7::text[] IS NULL OR m.keywords && $7)
),
tf AS (                                             -- term frequency of each query lexeme in each candidate
  SELECT c.id, length(c.fts)::float8 AS dl, u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
  FROM cand c CROSS JOIN LATERAL unnest(c.fts) u
  WHERE u.lexeme IN (SELECT lex FROM ql)
),
df AS (SELECT lexeme, count(*)::float8 AS df FROM tf GROUP BY lexeme),
st AS (                                             -- collection size: project row count (index-only scan) or table estimate
  SELECT greatest(CASE WHEN $2::varchar IS NULL
                       THEN (SELECT reltuples FROM pg_class WHERE oid = 'semantic_memory'::regclass)
                       ELSE (SELECT count(*) FROM semantic_memory WHERE project_id = $2) END,
                  (SELECT max(df) FROM df), 1)::float8 AS n
)
SELECT tf.id,
       count(*) * sum(ln(1 + (st.n - df.df + 0.5) / (df.df + 0.5))
                      * (0.5 + tf.tf * 2.2 / (tf.tf + 1.2 * (0.7 + 0.3 * tf.dl / 15.0)))) AS r
FROM tf JOIN df USING (lexeme) CROSS JOIN st
GROUP BY tf.id
ORDER BY r DESC, tf.id
LIMIT $3
