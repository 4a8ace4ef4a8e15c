-- Design-doc branch for comparison: websearch AND first, OR fallback (one-time filter), ts_rank.
WITH wq AS (SELECT websearch_to_tsquery('english', $1) AS q),
orq AS (SELECT ('''' || string_agg(replace(replace(l, '\', '\\'), '''', ''''''), ''' | ''') || '''')::tsquery AS q
        FROM unnest(tsvector_to_array(to_tsvector('english', $1))) l),
and_hits AS (
  SELECT m.id, 1 AS tier, ts_rank(m.fts, (SELECT q FROM wq)) AS r FROM semantic_memory m
  WHERE m.fts @@ (SELECT q FROM wq) AND ($2::varchar IS NULL OR m.project_id = $2) AND m.archived_at IS NULL
    AND ($4::varchar[] IS NULL OR m.content_type = ANY ($4)) AND ($5::timestamptz IS NULL OR m.created_at >= $5)
    AND ($6::timestamptz IS NULL OR m.created_at < $6) AND ($7::text[] IS NULL OR m.keywords && $7)
  ORDER BY r DESC, m.id LIMIT $3),
or_hits AS (
  SELECT m.id, 2 AS tier, ts_rank(m.fts, (SELECT q FROM orq)) AS r FROM semantic_memory m
  WHERE (SELECT count(*) FROM and_hits) < $3
    AND m.fts @@ (SELECT q FROM orq) AND ($2::varchar IS NULL OR m.project_id = $2) AND m.archived_at IS NULL
    AND ($4::varchar[] IS NULL OR m.content_type = ANY ($4)) AND ($5::timestamptz IS NULL OR m.created_at >= $5)
    AND ($6::timestamptz IS NULL OR m.created_at < $6) AND ($7::text[] IS NULL OR m.keywords && $7)
    AND m.id NOT IN (SELECT id FROM and_hits)
  ORDER BY r DESC, m.id LIMIT $3)
SELECT id, r FROM (SELECT * FROM and_hits UNION ALL SELECT * FROM or_hits) u ORDER BY tier, r DESC, id LIMIT $3
