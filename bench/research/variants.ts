// SQL variants of the keyword branch. Params: $1 query text, $2 project_id, $3 k.
// Every variant returns (id, r) ordered best-first, LIMIT $3.

// Safe OR-of-lexemes tsquery: lexemes come from to_tsvector (already normalised), each is
// wrapped in single quotes with \ and ' escaped, then joined with ' | ' and cast (no re-parsing
// of user syntax). Empty lexeme set -> NULL tsquery -> matches nothing, no NOTICE, no error.
export const orq = (
  cfg = 'english',
  src = '$1',
) => `(SELECT CASE WHEN cardinality(a) = 0 THEN NULL ELSE array_to_string(ARRAY(
     SELECT '''' || replace(replace(l, '\\', '\\\\'), '''', '''''') || '''' FROM unnest(a) l), ' | ')::tsquery END
   FROM (SELECT tsvector_to_array(to_tsvector('${cfg}', ${src})) a) s)`;
// Alternative: replace & with | in plainto_tsquery output (for comparison only).
export const orqReplace = `replace(plainto_tsquery('english', $1)::text, '&', '|')::tsquery`;

export const V: Record<string, string> = {};

// ---- baseline: OR of lexemes, ts_rank default normalisation
V['or_tsrank0'] = `
WITH kw AS (
  SELECT m.id, ts_rank(m.fts, q.tq) AS r
  FROM semantic_memory m, ${orq()} q(tq)
  WHERE m.project_id = $2 AND m.fts @@ q.tq
  ORDER BY r DESC, m.id LIMIT $3)
SELECT id, r FROM kw ORDER BY r DESC, id`;

V['orReplace_tsrank0'] = V['or_tsrank0'].replace(orq(), `(SELECT ${orqReplace})`);

for (const fn of ['ts_rank', 'ts_rank_cd'])
  for (const n of [1, 2, 4, 8, 16, 32, 1 | 32, 2 | 32, 8 | 32, 1 | 16, 2 | 8]) {
    if (fn === 'ts_rank' && n === 0) continue;
    V[`or_${fn}${n}`] = V['or_tsrank0'].replace('ts_rank(m.fts, q.tq)', `${fn}(m.fts, q.tq, ${n})`);
  }
V['or_ts_rank_cd0'] = V['or_tsrank0'].replace('ts_rank(m.fts, q.tq)', `ts_rank_cd(m.fts, q.tq)`);

// ---- design: AND (websearch) first; OR fallback only when AND hits < k; AND hits ranked above OR hits
export const andFirst = (rank = (tq: string) => `ts_rank(m.fts, ${tq})`) => `
WITH wq AS (SELECT websearch_to_tsquery('english', $1) AS tq),
and_hits AS (
  SELECT m.id, 1 AS tier, ${rank('wq.tq')} AS r
  FROM semantic_memory m, wq
  WHERE m.project_id = $2 AND m.fts @@ wq.tq
  ORDER BY r DESC, m.id LIMIT $3),
or_hits AS (
  SELECT m.id, 2 AS tier, ${rank('q.tq')} AS r
  FROM semantic_memory m, ${orq()} q(tq)
  WHERE (SELECT count(*) FROM and_hits) < $3
    AND m.project_id = $2 AND m.fts @@ q.tq
    AND m.id NOT IN (SELECT id FROM and_hits)
  ORDER BY r DESC, m.id LIMIT $3)
SELECT id, r FROM (SELECT * FROM and_hits UNION ALL SELECT * FROM or_hits) u
ORDER BY tier, r DESC, id LIMIT $3`;
V['andfirst_tsrank0'] = andFirst();
V['andfirst_tsrank1'] = andFirst((tq) => `ts_rank(m.fts, ${tq}, 1)`);

// ---- BM25 computed in SQL over the OR-candidate set.
// df is exact from the candidate set (every doc containing a query lexeme is a candidate).
// N and avgdl: 'exact' = computed over the project at query time; numbers = constants.
export type Bm25Opts = {
  k1?: number;
  b?: number;
  dl?: 'lex' | 'pos';
  stats?: 'exact' | 'table';
  avgdl?: number;
  cfg?: string;
  andBoost?: number;
  qtf?: boolean;
  delta?: number;
  coord?: number;
};
export const bm25 = (o: Bm25Opts = {}) => {
  const k1 = o.k1 ?? 1.2,
    b = o.b ?? 0.75,
    cfg = o.cfg ?? 'english';
  const dlExpr =
    o.dl === 'pos' ? `(SELECT sum(coalesce(array_length(u.positions, 1), 1)) FROM unnest(m.fts) u)` : `length(m.fts)`;
  const stats =
    o.stats === 'table'
      ? `SELECT n_docs::float8 AS n, (sum_len::float8 / greatest(n_docs, 1)) AS avgdl FROM kw_stats WHERE project_id = $2`
      : o.avgdl
        ? `SELECT count(*)::float8 AS n, ${o.avgdl}::float8 AS avgdl FROM semantic_memory WHERE project_id = $2`
        : `SELECT count(*)::float8 AS n, avg(${dlExpr.replaceAll('m.fts', 'fts')})::float8 AS avgdl FROM semantic_memory WHERE project_id = $2`;
  return `
WITH ql AS (SELECT unnest(tsvector_to_array(to_tsvector('${cfg}', $1))) AS lex),
cand AS (
  SELECT m.id, m.fts, ${dlExpr}::float8 AS dl
  FROM semantic_memory m
  WHERE m.project_id = $2 AND m.fts @@ ${orq(cfg)}),
tf AS (
  SELECT c.id, c.dl, u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
  FROM cand c CROSS JOIN LATERAL unnest(c.fts) u
  WHERE u.lexeme IN (SELECT lex FROM ql)),
df AS (SELECT lexeme, count(*)::float8 AS df FROM tf GROUP BY lexeme),
st AS (${stats}),
scored AS (
  SELECT tf.id,
         sum(ln(1 + (st.n - df.df + 0.5) / (df.df + 0.5))
             * (${o.delta ?? 0} + tf.tf * (${k1} + 1) / (tf.tf + ${k1} * (1 - ${b} + ${b} * tf.dl / st.avgdl))))
           ${o.coord ? `* power(count(*), ${o.coord})` : ''} AS r,
         count(*) AS nmatch
  FROM tf JOIN df USING (lexeme) CROSS JOIN st
  GROUP BY tf.id)
SELECT id, r FROM scored ORDER BY ${o.andBoost ? `(nmatch = (SELECT count(*) FROM ql)) DESC, ` : ''}r DESC, id LIMIT $3`;
};
V['bm25'] = bm25();
V['bm25_pos'] = bm25({ dl: 'pos' });

for (const coord of [0.5, 1, 1.5, 2]) V[`bm25_coord${coord}`] = bm25({ coord });
V['bm25plus_mini'] = bm25({ k1: 1.2, b: 0.7, delta: 0.5, coord: 1 }); // MiniSearch defaults
V['bm25_and'] = bm25({ andBoost: 1 });
