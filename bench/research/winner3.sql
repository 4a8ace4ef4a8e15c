-- Keyword branch v3 = winner2 (BM25+ x #matched lexemes, stats tables, selective-lexeme pruning)
-- + temporal-neighbour smoothing: each of the top 200 gets + 0.4 x (sum of the first-pass scores of the 2 memories
-- before and the 2 after it in created_at order within its project). USES created_at ORDER (memories stored in time order).
-- Needs: CREATE INDEX ON semantic_memory (project_id, created_at, id);
-- $1 query, $2 project_id|NULL, $3 k, $4 content_type[]|NULL, $5 created_from, $6 created_to, $7 keywords[]|NULL
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
  SELECT m.id, m.fts, m.content, m.created_at, m.project_id FROM semantic_memory m
  WHERE m.fts @@ (SELECT sel FROM tq) AND ($2::varchar IS NULL OR m.project_id = $2) AND m.archived_at IS NULL
    AND ($4::varchar[] IS NULL OR m.content_type = ANY ($4))
    AND ($5::timestamptz IS NULL OR m.created_at >= $5) AND ($6::timestamptz IS NULL OR m.created_at < $6)
    AND ($7::text[] IS NULL OR m.keywords && $7)
),
cand_fb AS (
  SELECT m.id, m.fts, m.content, m.created_at, m.project_id FROM semantic_memory m
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
top AS (SELECT id, r FROM s1f ORDER BY r DESC, id LIMIT 200),
nbl AS (
  SELECT t.id, z.nid FROM top t JOIN semantic_memory tm ON tm.id = t.id
  CROSS JOIN LATERAL (
    (SELECT y.id FROM semantic_memory y WHERE y.project_id = tm.project_id AND y.archived_at IS NULL
       AND (y.created_at, y.id) < (tm.created_at, tm.id) ORDER BY y.created_at DESC, y.id DESC LIMIT 2)
    UNION ALL
    (SELECT y.id FROM semantic_memory y WHERE y.project_id = tm.project_id AND y.archived_at IS NULL
       AND (y.created_at, y.id) > (tm.created_at, tm.id) ORDER BY y.created_at, y.id LIMIT 2)) z(nid)
),
nbs AS (SELECT nbl.id, sum(f.r) AS s FROM nbl JOIN s1f f ON f.id = nbl.nid GROUP BY nbl.id),
nbr AS (SELECT top.id, top.r + 0.4 * coalesce(nbs.s, 0) AS r FROM top LEFT JOIN nbs USING (id))
SELECT id, r FROM nbr ORDER BY r DESC, id LIMIT $3