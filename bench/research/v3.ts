// Round 3 variants on top of winner2.sql (BM25+ from stats tables, selective-lexeme pruning, coord = #matched lexemes).
// Params like winner2: $1 query, $2 project_id|NULL, $3 k, $4 content_type[], $5 from, $6 to, $7 keywords[].
// usage: npx tsx bench/research/v3.ts <regex>
export type O = {
  p?: number; // coverage exponent: score = bm * nm^p
  prf?: {
    m: number;
    t: number;
    w: number;
    minDocs?: number;
    maxDfFrac?: number;
    newDocs?: boolean;
    wmode?: 'max' | 'sum' | 'flat';
    fbw?: 'flat' | 'score';
  };
  prox?: { win: number; w: number }; // bonus factor (1 + w * #adjacent query-lexeme pairs within win)
  simple?: number; // weight of exact surface-form ('simple' config) matches bonus
  prefix?: number; // min length of query lexeme for prefix expansion (rare lexemes only)
  nb?: { w: number; win: number }; // neighbour smoothing by created_at within project
  k1?: number;
  b?: number;
  delta?: number;
  softc?: number; // soft coverage: each matched lexeme counts least(1, idf / softc)
};
const FILT = (a: string) => `($2::varchar IS NULL OR ${a}.project_id = $2) AND ${a}.archived_at IS NULL
    AND ($4::varchar[] IS NULL OR ${a}.content_type = ANY ($4))
    AND ($5::timestamptz IS NULL OR ${a}.created_at >= $5) AND ($6::timestamptz IS NULL OR ${a}.created_at < $6)
    AND ($7::text[] IS NULL OR ${a}.keywords && $7)`;
const Q = (col: string) => `replace(replace(${col}, '\\', '\\\\'), '''', '''''')`;
const IDF = (df: string) => `ln(1 + (st.n - ${df} + 0.5) / (${df} + 0.5))`;

export function build(o: O = {}): string {
  const k1 = o.k1 ?? 1.2,
    b = o.b ?? 0.3,
    d = o.delta ?? 0.5;
  const TFN = (tf: string, dl: string) =>
    `(${d} + ${tf} * ${k1 + 1} / (${tf} + ${k1} * (${1 - b} + ${b} * ${dl} / st.avgdl)))`;
  const p = o.p ?? 1;
  const cov = p === 1 ? 's1.nm' : `power(s1.nm, ${p})`;
  const parts: string[] = [];
  parts.push(`st AS (
  SELECT coalesce(sum(n_docs), 0)::float8 AS n,
         coalesce(sum(sum_len)::float8 / nullif(sum(n_docs), 0), 15) AS avgdl
  FROM kw_project_stats WHERE $2::varchar IS NULL OR project_id = $2
)`);
  parts.push(`ql AS (
  SELECT l.lex, ${IDF('d.df')} AS idf, d.df <= 0.05 * st.n AS selective
  FROM unnest(tsvector_to_array(to_tsvector('english', $1))) AS l(lex)
  CROSS JOIN st
  CROSS JOIN LATERAL (SELECT coalesce(sum(x.df), 0)::float8 AS df FROM kw_lexeme_df x
                      WHERE x.lexeme = l.lex AND ($2::varchar IS NULL OR x.project_id = $2)) d
)`);
  const pre = o.prefix ? `|| CASE WHEN selective AND length(lex) >= ${o.prefix} THEN ':*' ELSE '' END` : '';
  parts.push(`tq AS (
  SELECT string_agg('''' || ${Q('lex')} || '''' ${pre}, ' | ')
                 FILTER (WHERE selective OR NOT EXISTS (SELECT 1 FROM ql WHERE selective))::tsquery AS sel,
         string_agg('''' || ${Q('lex')} || '''' ${pre}, ' | ')::tsquery AS alll
  FROM ql
)`);
  parts.push(`cand AS (
  SELECT m.id, m.fts${o.simple || o.nb ? ', m.content, m.created_at, m.project_id' : ''} FROM semantic_memory m
  WHERE m.fts @@ (SELECT sel FROM tq) AND ${FILT('m')}
)`);
  parts.push(`cand_fb AS (
  SELECT m.id, m.fts${o.simple || o.nb ? ', m.content, m.created_at, m.project_id' : ''} FROM semantic_memory m
  WHERE (SELECT count(*) FROM cand) < $3
    AND m.fts @@ (SELECT alll FROM tq) AND NOT m.fts @@ (SELECT sel FROM tq) AND ${FILT('m')}
)`);
  parts.push(`c0 AS (SELECT * FROM cand UNION ALL SELECT * FROM cand_fb)`);
  const join = o.prefix
    ? `JOIN ql ON (ql.lex = u.lexeme OR (ql.selective AND length(ql.lex) >= ${o.prefix} AND starts_with(u.lexeme, ql.lex)))`
    : `JOIN ql ON ql.lex = u.lexeme`;
  parts.push(`tf AS (
  SELECT c.id, length(c.fts)::float8 AS dl, ql.lex, ql.idf, coalesce(array_length(u.positions, 1), 1)::float8 AS tf, u.positions
  FROM c0 c CROSS JOIN LATERAL unnest(c.fts) u ${join}
)`);
  parts.push(`s1 AS (
  SELECT tf.id, ${o.softc ? `sum(least(1, tf.idf / ${o.softc}))` : 'count(DISTINCT tf.lex)::float8'} AS nm, sum(tf.idf * ${TFN('tf.tf', 'tf.dl')}) AS bm
  FROM tf CROSS JOIN st GROUP BY tf.id
)`);
  let score = `${cov} * s1.bm`;
  if (o.prox) {
    parts.push(`px AS (
  SELECT a.id, count(*)::float8 AS np FROM
    (SELECT tf.id, tf.lex, unnest(tf.positions) AS pos FROM tf) a
    JOIN (SELECT tf.id, tf.lex, unnest(tf.positions) AS pos FROM tf) b2
      ON a.id = b2.id AND a.lex < b2.lex AND abs(a.pos - b2.pos) <= ${o.prox.win}
  GROUP BY a.id
)`);
    score = `(${score}) * (1 + ${o.prox.w} * coalesce((SELECT np FROM px WHERE px.id = s1.id), 0))`;
  }
  if (o.simple) {
    // exact surface forms of the query's content words, matched against the doc's simple tsvector
    parts.push(`qs AS (SELECT array_agg(DISTINCT s.lexeme) AS a FROM unnest(to_tsvector('simple', $1)) s
   JOIN unnest(to_tsvector('english', $1)) e ON e.positions && s.positions)`);
    score = `(${score}) * (1 + ${o.simple} * (SELECT count(*) FROM unnest(to_tsvector('simple', c.content)) u WHERE u.lexeme = ANY ((SELECT a FROM qs)::text[])))`;
  }
  parts.push(`s1f AS (SELECT s1.id, ${score} AS r FROM s1${o.simple ? ' JOIN c0 c USING (id)' : ''})`);
  let finalFrom = 's1f';
  if (o.prf) {
    const { m, t, w } = o.prf;
    const fbw = o.prf.fbw === 'score' ? 'fb.r / (SELECT max(r) FROM fb)' : '1';
    parts.push(`fb AS (SELECT s1f.id, s1f.r FROM s1f ORDER BY s1f.r DESC, s1f.id LIMIT ${m})`);
    parts.push(`fbl AS (
  SELECT u.lexeme AS lex, sum(${fbw} * coalesce(array_length(u.positions, 1), 1)::float8 / length(c.fts)) AS tfw, count(*) AS nd
  FROM fb JOIN c0 c USING (id) CROSS JOIN LATERAL unnest(c.fts) u
  WHERE NOT EXISTS (SELECT 1 FROM ql WHERE ql.lex = u.lexeme)
  GROUP BY u.lexeme HAVING count(*) >= ${o.prf.minDocs ?? 1}
)`);
    parts.push(`el AS (
  SELECT fbl.lex, ${IDF('d.df')} AS idf, fbl.tfw * ${IDF('d.df')} AS wt
  FROM fbl CROSS JOIN st
  CROSS JOIN LATERAL (SELECT coalesce(sum(x.df), 0)::float8 AS df FROM kw_lexeme_df x
                      WHERE x.lexeme = fbl.lex AND ($2::varchar IS NULL OR x.project_id = $2)) d
  WHERE d.df >= 2 AND d.df <= ${o.prf.maxDfFrac ?? 0.05} * st.n
  ORDER BY wt DESC, fbl.lex LIMIT ${t}
)`);
    const wn =
      o.prf.wmode === 'flat'
        ? '1'
        : o.prf.wmode === 'sum'
          ? `el.wt / (SELECT sum(wt) FROM el)`
          : `el.wt / (SELECT max(wt) FROM el)`;
    if (o.prf.newDocs) {
      parts.push(`cand2 AS (
  SELECT m.id, m.fts FROM semantic_memory m
  WHERE m.fts @@ (SELECT string_agg('''' || ${Q('lex')} || '''', ' | ')::tsquery FROM el) AND ${FILT('m')}
    AND NOT EXISTS (SELECT 1 FROM c0 WHERE c0.id = m.id)
)`);
      parts.push(`c1 AS (SELECT id, fts FROM c0 UNION ALL SELECT id, fts FROM cand2)`);
    } else parts.push(`c1 AS (SELECT id, fts FROM c0)`);
    parts.push(`s2 AS (
  SELECT c.id, sum(${wn} * el.idf * ${TFN('coalesce(array_length(u.positions, 1), 1)', 'length(c.fts)')}) AS ebm
  FROM c1 c CROSS JOIN LATERAL unnest(c.fts) u JOIN el ON el.lex = u.lexeme CROSS JOIN st
  GROUP BY c.id
)`);
    parts.push(`s3 AS (SELECT coalesce(s1f.id, s2.id) AS id, coalesce(s1f.r, 0) + ${w} * coalesce(s2.ebm, 0) AS r
  FROM s1f FULL JOIN s2 USING (id))`);
    finalFrom = 's3';
  }
  if (o.nb) {
    // temporal-neighbour smoothing: each of the top 200 gets + w * (sum of scores of its +-win neighbours in
    // created_at order within the same project). Needs an index on (project_id, created_at, id).
    parts.push(`top AS (SELECT id, r FROM ${finalFrom} ORDER BY r DESC, id LIMIT 200)`);
    parts.push(`nbl AS (
  SELECT t.id, z.nid FROM top t JOIN semantic_memory tm ON tm.id = t.id
  CROSS JOIN LATERAL (
    (SELECT y.id FROM semantic_memory y WHERE y.project_id = tm.project_id AND y.archived_at IS NULL
       AND (y.created_at, y.id) < (tm.created_at, tm.id) ORDER BY y.created_at DESC, y.id DESC LIMIT ${o.nb.win})
    UNION ALL
    (SELECT y.id FROM semantic_memory y WHERE y.project_id = tm.project_id AND y.archived_at IS NULL
       AND (y.created_at, y.id) > (tm.created_at, tm.id) ORDER BY y.created_at, y.id LIMIT ${o.nb.win})) z(nid)
)`);
    parts.push(`nbs AS (SELECT nbl.id, sum(f.r) AS s FROM nbl JOIN ${finalFrom} f ON f.id = nbl.nid GROUP BY nbl.id)`);
    parts.push(`nbr AS (SELECT top.id, top.r + ${o.nb.w} * coalesce(nbs.s, 0) AS r FROM top LEFT JOIN nbs USING (id))`);
    finalFrom = 'nbr';
  }
  return `WITH ${parts.join(',\n')}
SELECT id, r FROM ${finalFrom} ORDER BY r DESC, id LIMIT $3`;
}

export const V3: Record<string, O> = {
  base: {},
  base_b07: { b: 0.7 },
};
for (const p of [0.5, 0.75, 1.5, 2, 3]) V3[`cov_p${p}`] = { p };
for (const win of [1, 2, 4]) for (const w of [0.1, 0.3]) V3[`prox_w${win}_${w}`] = { prox: { win, w } };
for (const c of [0.5, 1, 1.5, 2, 3]) V3[`softc_${c}`] = { softc: c };
for (const c of [1, 2]) for (const p of [1.5, 2]) V3[`softc_${c}_p${p}`] = { softc: c, p };
for (const win of [1, 2, 3]) for (const w of [0.1, 0.2, 0.4]) V3[`nb_${win}_${w}`] = { nb: { win, w } };
for (const s of [0.1, 0.3]) V3[`simple_${s}`] = { simple: s };
for (const pf of [4, 5, 6]) V3[`prefix_${pf}`] = { prefix: pf };
for (const m of [3, 5, 10])
  for (const t of [5, 10, 20]) for (const w of [0.2, 0.5]) V3[`prf_m${m}_t${t}_w${w}`] = { prf: { m, t, w } };

for (const [m, t] of [
  [3, 20],
  [5, 10],
  [5, 20],
] as const)
  for (const w of [0.3, 0.5, 0.8, 1.2]) {
    V3[`prfB_m${m}_t${t}_w${w}`] = { prf: { m, t, w } };
    V3[`prfN_m${m}_t${t}_w${w}`] = { prf: { m, t, w, newDocs: true } };
    V3[`prfS_m${m}_t${t}_w${w}`] = { prf: { m, t, w, fbw: 'score' } };
    V3[`prfF_m${m}_t${t}_w${w}`] = { prf: { m, t, w, wmode: 'flat' } };
    V3[`prfD_m${m}_t${t}_w${w}`] = { prf: { m, t, w, maxDfFrac: 0.2 } };
  }
for (const w of [0.3, 0.4, 0.6]) {
  V3[`nbE_2_${w}`] = { nb: { win: 2, w } };
  V3[`nbE_3_${w}`] = { nb: { win: 3, w } };
  V3[`nbP_2_${w}`] = { nb: { win: 2, w }, prf: { m: 5, t: 20, w: 0.5 } };
}
if (import.meta.url === `file://${process.argv[1]}`) {
  const { evaluate, row, header } = await import('./harness.js');
  const re = new RegExp(process.argv[2] ?? '^base$');
  console.log(header);
  for (const [name, o] of Object.entries(V3))
    if (re.test(name)) console.log(row(name, await evaluate(build(o), { extra: () => [null, null, null, null] })));
}
