-- Keyword branch v3-prf (no created_at): winner2 + RM3-style PRF (top 5 docs, 20 expansion lexemes by tf/dl*idf, df<=5%N, weight 0.5 x normalised)
WITH st AS (
  SELECT coalesce(sum(n_docs), 0)::float8 AS n,
         coalesce(sum(sum_len)::float8 / nullif(sum(n_docs), 0), 15) AS avgdl
  FROM kw_project_stats WHERE $2::varchar IS NULL OR project_id = $2
),
ql AS (
  SELECT l.lex, ln(1 + (st.n - d.df + 0.5) / (d.df + 0.5)) AS idf, d.df <= 0.05 * st.n AS selective
  FROM unnest(tsvector_to_array(to_tsvector('english', $1))) AS l(lex)
  CROSS JOIN st
  CROSS JOIN LATERAL (SELECT coalesce(sum(x.df), 0)::float8 AS df FROM kw_lexeme_df x
                      WHERE x.lexeme = l.lex AND ($2::varchar IS NULL OR x.project_id = $2)) d
),
tq AS (
  SELECT string_agg('''' || replace(replace(lex, '\', '\\'), '''', '''''') || '''' , ' | ')
                 FILTER (WHERE selective OR NOT EXISTS (SELECT 1 FROM ql WHERE selective))::tsquery AS sel,
         string_agg('''' || replace(replace(lex, '\', '\\'), '''', '''''') || '''' , ' | ')::tsquery AS alll
  FROM ql
),
cand AS (
  SELECT m.id, m.fts FROM semantic_memory m
  WHERE m.fts @@ (SELECT sel FROM tq) AND ($2::varchar IS NULL OR m.project_id = $2) AND m.archived_at IS NULL
    AND ($4::varchar[] IS NULL OR m.content_type = ANY ($4))
    AND ($5::timestamptz IS NULL OR m.created_at >= $5) AND ($6::timestamptz IS NULL OR m.created_at < $6)
    AND ($7::text[] IS NULL OR m.keywords && $7)
),
cand_fb AS (
  SELECT m.id, m.fts FROM semantic_memory m
  WHERE (SELECT count(*) FROM cand) < $3
    AND m.fts @@ (SELECT alll FROM tq) AND NOT m.fts @@ (SELECT sel FROM tq) AND ($2::varchar IS NULL OR m.project_id = $2) AND m.archived_at IS NULL
    AND ($4::varchar[] IS NULL OR m.content_type = ANY ($4))
    AND ($5::timestamptz IS NULL OR m.created_at >= $5) AND ($6::timestamptz IS NULL OR m.created_at < $6)
    AND ($7::text[] IS NULL OR m.keywords && $7)
),
c0 AS (SELECT * FROM cand UNION ALL SELECT * FROM cand_fb),
tf AS (
  SELECT c.id, length(c.fts)::float8 AS dl, ql.lex, ql.idf, coalesce(array_length(u.positions, 1), 1)::float8 AS tf, u.positions
  FROM c0 c CROSS JOIN LATERAL unnest(c.fts) u JOIN ql ON ql.lex = u.lexeme
),
s1 AS (
  SELECT tf.id, count(DISTINCT tf.lex)::float8 AS nm, sum(tf.idf * (0.5 + tf.tf * 2.2 / (tf.tf + 1.2 * (0.7 + 0.3 * tf.dl / st.avgdl)))) AS bm
  FROM tf CROSS JOIN st GROUP BY tf.id
),
s1f AS (SELECT s1.id, s1.nm * s1.bm AS r FROM s1),
fb AS (SELECT s1f.id, s1f.r FROM s1f ORDER BY s1f.r DESC, s1f.id LIMIT 5),
fbl AS (
  SELECT u.lexeme AS lex, sum(1 * coalesce(array_length(u.positions, 1), 1)::float8 / length(c.fts)) AS tfw, count(*) AS nd
  FROM fb JOIN c0 c USING (id) CROSS JOIN LATERAL unnest(c.fts) u
  WHERE NOT EXISTS (SELECT 1 FROM ql WHERE ql.lex = u.lexeme)
  GROUP BY u.lexeme HAVING count(*) >= 1
),
el AS (
  SELECT fbl.lex, ln(1 + (st.n - d.df + 0.5) / (d.df + 0.5)) AS idf, fbl.tfw * ln(1 + (st.n - d.df + 0.5) / (d.df + 0.5)) AS wt
  FROM fbl CROSS JOIN st
  CROSS JOIN LATERAL (SELECT coalesce(sum(x.df), 0)::float8 AS df FROM kw_lexeme_df x
                      WHERE x.lexeme = fbl.lex AND ($2::varchar IS NULL OR x.project_id = $2)) d
  WHERE d.df >= 2 AND d.df <= 0.05 * st.n
  ORDER BY wt DESC, fbl.lex LIMIT 20
),
c1 AS (SELECT id, fts FROM c0),
s2 AS (
  SELECT c.id, sum(el.wt / (SELECT max(wt) FROM el) * el.idf * (0.5 + coalesce(array_length(u.positions, 1), 1) * 2.2 / (coalesce(array_length(u.positions, 1), 1) + 1.2 * (0.7 + 0.3 * length(c.fts) / st.avgdl)))) AS ebm
  FROM c1 c CROSS JOIN LATERAL unnest(c.fts) u JOIN el ON el.lex = u.lexeme CROSS JOIN st
  GROUP BY c.id
),
s3 AS (SELECT coalesce(s1f.id, s2.id) AS id, coalesce(s1f.r, 0) + 0.5 * coalesce(s2.ebm, 0) AS r
  FROM s1f FULL JOIN s2 USING (id))
SELECT id, r FROM s3 ORDER BY r DESC, id LIMIT $3