// Structural BM25 extensions on top of the MiniSearch-like BM25+ (k1=1.2, b=0.7, delta=0.5, coord=1).
import { orq } from './variants.js';
type Ext = {
  idfPow?: number;
  k1?: number;
  b?: number;
  delta?: number;
  final?: string;
  extraCols?: string;
  stats?: string;
  cand?: string;
  tfWhere?: string;
  ql?: string;
  prefix?: boolean;
};
export const bm25x = (o: Ext = {}) => {
  const k1 = o.k1 ?? 1.2,
    b = o.b ?? 0.7,
    d = o.delta ?? 0.5;
  const stats =
    o.stats ??
    `SELECT count(*)::float8 AS n, avg(length(fts))::float8 AS avgdl FROM semantic_memory WHERE project_id = $2`;
  return `
WITH ql AS (${o.ql ?? `SELECT unnest(tsvector_to_array(to_tsvector('english', $1))) AS lex`}),
cand AS (
  SELECT m.id, m.fts, m.content, length(m.fts)::float8 AS dl
  FROM semantic_memory m
  WHERE m.project_id = $2 AND m.fts @@ ${o.cand ?? orq()}),
tf AS (
  SELECT c.id, c.dl, q.lex AS lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
  FROM cand c CROSS JOIN LATERAL unnest(c.fts) u JOIN ql q ON ${o.prefix ? `(u.lexeme = q.lex OR (length(q.lex) >= 4 AND starts_with(u.lexeme, q.lex)))` : `u.lexeme = q.lex`}),
df AS (SELECT lexeme, count(DISTINCT id)::float8 AS df FROM tf GROUP BY lexeme),
st AS (${stats}),
scored AS (
  SELECT tf.id, max(tf.dl) AS dl,
         sum(power(ln(1 + (st.n - df.df + 0.5) / (df.df + 0.5)), ${o.idfPow ?? 1})
             * (${d} + tf.tf * (${k1} + 1) / (tf.tf + ${k1} * (1 - ${b} + ${b} * tf.dl / st.avgdl)))) AS bm,
         count(DISTINCT tf.lexeme) AS nmatch,
         sum(ln(1 + (st.n - df.df + 0.5) / (df.df + 0.5))) AS midf
  FROM tf JOIN df USING (lexeme) CROSS JOIN st
  GROUP BY tf.id),
qidf AS (SELECT sum(ln(1 + (st.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5))) AS tot
         FROM ql LEFT JOIN df ON df.lexeme = ql.lex CROSS JOIN st),
fin AS (SELECT s.id, ${o.final ?? 's.bm * s.nmatch'} AS r FROM scored s JOIN cand c USING (id)${o.extraCols ?? ''})
SELECT id, r FROM fin ORDER BY r DESC, id LIMIT $3`;
};
export const W: Record<string, string> = {};
W['x_base'] = bm25x();
// blend with ts_rank (cover density / plain), ranks fused
W['x_rrf_tsrank'] = bm25x({
  final: `1.0/(60 + row_number() OVER (ORDER BY s.bm * s.nmatch DESC, s.id)) + 1.0/(60 + row_number() OVER (ORDER BY ts_rank(c.fts, ${orq()}) DESC, s.id))`,
});
W['x_plus_cd'] = bm25x({ final: `s.bm * s.nmatch * (1 + ts_rank_cd(c.fts, ${orq()}, 0))` });
// exact-surface-form bonus: raw (unstemmed) forms of the query's non-stopword tokens, aligned by position
const rawForms = `(SELECT coalesce(array_agg(DISTINCT s.lexeme), '{}') FROM unnest(to_tsvector('simple', $1)) s
   JOIN unnest(to_tsvector('english', $1)) e ON e.positions && s.positions)`;
W['x_rawbonus'] = bm25x({
  final: `s.bm * s.nmatch * (1 + 0.3 * cardinality(ARRAY(SELECT unnest(tsvector_to_array(to_tsvector('simple', c.content))) INTERSECT SELECT unnest(${rawForms}))))`,
});
W['x_prefix'] = bm25x({
  prefix: true,
  cand: `(SELECT CASE WHEN cardinality(a) = 0 THEN NULL ELSE array_to_string(ARRAY(
     SELECT '''' || replace(replace(l, '\\', '\\\\'), '''', '''''') || '''' || CASE WHEN length(l) >= 4 THEN ':*' ELSE '' END FROM unnest(a) l), ' | ')::tsquery END
   FROM (SELECT tsvector_to_array(to_tsvector('english', $1)) a) s)`,
});
// sanity: coord via nmatch^0 (pure BM25+)
W['x_nocoord'] = bm25x({ final: 's.bm' });

W['x_idf1.5'] = bm25x({ idfPow: 1.5 });
W['x_idf2'] = bm25x({ idfPow: 2 });
W['x_cov1'] = bm25x({ final: 's.bm * (s.midf / (SELECT tot FROM qidf))' });
W['x_cov2'] = bm25x({ final: 's.bm * power(s.midf / (SELECT tot FROM qidf), 2)' });
W['x_cov1_coord'] = bm25x({ final: 's.bm * s.nmatch * (s.midf / (SELECT tot FROM qidf))' });
// statistics approximations (for speed): constant avgdl, N from table-wide estimate, N from a stats table
W['x_k06b03'] = bm25x({ k1: 0.6, b: 0.3 });
W['x_k06b03_avg15'] = bm25x({
  k1: 0.6,
  b: 0.3,
  stats: `SELECT count(*)::float8 AS n, 15::float8 AS avgdl FROM semantic_memory WHERE project_id = $2`,
});
W['x_k06b03_N1e5'] = bm25x({ k1: 0.6, b: 0.3, stats: `SELECT 100000::float8 AS n, 15::float8 AS avgdl` });
W['x_k06b03_N1e3'] = bm25x({ k1: 0.6, b: 0.3, stats: `SELECT 1000::float8 AS n, 15::float8 AS avgdl` });
W['x_base_avg15_N1e5'] = bm25x({ stats: `SELECT 100000::float8 AS n, 15::float8 AS avgdl` });
