/**
 * How the semantic channel of code search should be fused with the lexical one (issue 21): for
 * every question of bench/context, the lexical ranking (the service's own lexicalSearch over its
 * search index) and the nodes nearest the question by GloVe (the benchmark's SIF-weighted mean,
 * computed here in process over each node's embed_doc, exactly as the service would embed it),
 * then fusion variants scored offline: find_symbols MRR@10 and the top hit after pickAnswer.
 * A tool to read, not a benchmark: it judges nothing.
 *
 *   DATABASE_URL=… npx tsx bench/research/semantic-fusion.ts --checkouts ../checkouts
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { openDb } from '../../src/db/client.js';
import { pickAnswer } from '../../src/domain/graphs/answer-shape.js';
import { lexicalSearch, type LexicalHit } from '../../src/domain/graphs/lexical-search.js';
import { SearchIndexCache, type SearchIndex } from '../../src/domain/graphs/search-index.js';
import { identifierWords } from '../../src/domain/graphs/search-document.js';
import { searchTerms, type SearchTerms } from '../../src/domain/graphs/search-terms.js';
import { type ContextQuestion, uploadCheckout } from '../lib/checkout-graph.js';
import { startService } from '../lib/child.js';
import { GloveVectors } from '../lib/glove-ollama.js';
import { scratchPostgres } from '../lib/scratch.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const POOL = 50;

type Question = ContextQuestion;

interface Case {
  repo: string;
  q: Question;
  terms: SearchTerms;
  lexical: LexicalHit[];
  /** Nearest nodes by cosine, best first. */
  semantic: Array<{ id: string; sim: number }>;
  index: Pick<SearchIndex, 'node'>;
}

interface Doc {
  id: string;
  name: string;
  type: string;
  file_path: string;
  start_line: number;
  end_line: number;
  doc: string;
}

interface Collected {
  repos: Record<string, { docs: Doc[]; nodes: Record<string, LexicalHit> }>;
  cases: Array<{ repo: string; q: Question; terms: SearchTerms; lexical: LexicalHit[] }>;
}

/** What a variant embeds for a node. */
export type DocText = (d: Doc) => string;

function dot(a: number[], b: Float32Array | number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

type Fuse = (c: Case) => LexicalHit[];

function evaluate(cases: Case[], fuse: Fuse) {
  let mrr = 0;
  let at1 = 0;
  let n = 0;
  let recall = 0;
  const wins: string[] = [];
  for (const c of cases) {
    if (c.q.category === 'identifier') continue;
    n++;
    const hits = fuse(c);
    const a = pickAnswer(hits, c.terms);
    const shaped = a === 0 ? hits : [hits[a]!, ...hits.filter((_, i) => i !== a)];
    const top10 = shaped.slice(0, 10).map((h) => h.node_id);
    const r = top10.findIndex((id) => c.q.gold.includes(id));
    if (r !== -1) mrr += 1 / (r + 1);
    const top20 = new Set(shaped.slice(0, 20).map((h) => h.node_id));
    recall += c.q.gold.filter((g) => top20.has(g)).length / c.q.gold.length;
    if (r === 0) {
      at1++;
      wins.push(c.q.id);
    }
  }
  return { mrr: mrr / n, at1: at1 / n, recall: recall / n, wins };
}

const CACHE = '/tmp/semantic-fusion-cases.json';

async function collect(checkouts: string): Promise<Collected> {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL (a Postgres server) is needed');
  const dir = join(ROOT, 'bench/context/questions');
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  const scratch = await scratchPostgres(base);
  const service = await startService({
    cwd: ROOT,
    env: { ...scratch.env, LOG_LEVEL: 'warn', AUTH: 'off', GRAPH_UPLOAD_LIMIT: '1GB', EMBEDDING_PROVIDER: 'none' },
  });
  const db = await openDb(scratch.dbOptions);
  const out: Collected = { repos: {}, cases: [] };
  try {
    const cache = new SearchIndexCache();
    for (const f of files) {
      const file = JSON.parse(await readFile(join(dir, f), 'utf8')) as { repo: string; questions: Question[] };
      await uploadCheckout(service.url, checkouts, file.repo);
      const g = (
        await sql<{ graph_id: string; commit_hash: string; uploaded_at: Date }>`
          select c.graph_id, c.commit_hash, c.uploaded_at from graph_commits c
            join code_graphs g using (graph_id) where g.repo = ${file.repo}`.execute(db.kysely)
      ).rows[0]!;
      const graph = { graphId: g.graph_id, commitHash: g.commit_hash, uploadedAt: g.uploaded_at.toISOString() };
      const index = await cache.get(db.kysely, graph);
      const docs = (
        await sql<Doc & { node_id: string; embed_doc: string }>`
          select distinct on (node_id) node_id, name, type, file_path, start_line, end_line, embed_doc from graph_nodes
           where graph_id = ${g.graph_id} and commit_hash = ${g.commit_hash} and embed_doc is not null
           order by node_id, seq`.execute(db.kysely)
      ).rows.map(({ node_id, embed_doc, ...rest }) => ({ ...rest, id: node_id, doc: embed_doc }));
      const nodes: Record<string, LexicalHit> = {};
      for (const d of docs) {
        const node = index.node(d.id);
        if (node) nodes[d.id] = { ...node, exact: false, rank: 0 };
      }
      out.repos[file.repo] = { docs, nodes };
      for (const q of file.questions) {
        const asked = searchTerms(q.question);
        const terms = q.intent === 'concept' ? { ...asked, asksDefinition: true } : asked;
        const lexical = await lexicalSearch({ db: db.kysely }, index, terms, POOL);
        out.cases.push({ repo: file.repo, q, terms, lexical });
      }
      console.log(`${file.repo}: ${docs.length} node documents, ${file.questions.length} questions`);
    }
  } finally {
    await service.stop();
    await db.close();
    await scratch.drop();
  }
  return out;
}

function unit(v: number[]): number[] {
  const n = Math.sqrt(dot(v, v)) || 1;
  return v.map((x) => x / n);
}

function semanticCases(
  data: Collected,
  glove: GloveVectors,
  text: DocText,
  query: (q: Question, t: SearchTerms) => string,
  center = false,
): Case[] {
  const vectors = new Map<string, Array<{ id: string; v: number[] }>>();
  const means = new Map<string, number[]>();
  for (const [repo, { docs }] of Object.entries(data.repos)) {
    const raw = docs.map((d) => ({ id: d.id, v: glove.embed(text(d)) }));
    const mean = new Array<number>(raw[0]!.v.length).fill(0);
    for (const r of raw) r.v.forEach((x, i) => (mean[i]! += x / raw.length));
    means.set(repo, center ? mean : mean.map(() => 0));
    vectors.set(
      repo,
      raw.map((r) => ({ id: r.id, v: unit(r.v.map((x, i) => x - means.get(repo)![i]!)) })),
    );
  }
  return data.cases.map((c) => {
    const mean = means.get(c.repo)!;
    const qv = unit(glove.embed(query(c.q, c.terms)).map((x, i) => x - mean[i]!));
    const semantic = vectors
      .get(c.repo)!
      .map((d) => ({ id: d.id, sim: dot(qv, d.v) }))
      .sort((a, b) => b.sim - a.sim)
      .slice(0, POOL);
    const nodes = data.repos[c.repo]!.nodes;
    return { ...c, semantic, index: { node: (id: string) => nodes[id] } };
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      checkouts: { type: 'string', default: join(ROOT, '../checkouts') },
      fresh: { type: 'boolean', default: false },
    },
  });
  const glove = await GloveVectors.load();
  let data: Collected;
  if (!values.fresh && existsSync(CACHE)) data = JSON.parse(await readFile(CACHE, 'utf8')) as Collected;
  else {
    data = await collect(values.checkouts!);
    await writeFile(CACHE, JSON.stringify(data));
  }
  const center = process.env.CENTER === '1';
  const pathWords = (d: Doc) =>
    d.file_path
      .replace(/\.[a-z]+$/, '')
      .split(/[/_.-]+/)
      .join(' ');
  const owner = (d: Doc) => (d.id.includes('.') ? identifierWords(d.id.split('::').pop()!.split('.')[0]!) : '');
  const texts: Record<string, DocText> = {
    doc: (d) => d.doc,
    docPath: (d) => `${d.doc}\n${pathWords(d)}`,
    docOwner: (d) => `${owner(d)} ${d.doc}`,
    nameOnly: (d) => d.doc.split('\n')[0]!,
    noSignature: (d) =>
      d.doc
        .split('\n')
        .filter((_, i) => i !== 1)
        .join('\n'),
  };
  const queries: Record<string, (q: Question, t: SearchTerms) => string> = {
    text: (_q, t) => t.text,
    words: (_q, t) => t.words.join(' '),
  };
  const cases = semanticCases(
    data,
    glove,
    texts[process.env.DOC ?? 'doc']!,
    queries[process.env.QUERY ?? 'text']!,
    center,
  );

  // The semantic channel alone.
  const semOnly: Fuse = (c) =>
    c.semantic.flatMap((s, i) => {
      const node = c.index.node(s.id);
      return node ? [{ ...node, exact: false, rank: POOL - i }] : [];
    });
  const lexOnly: Fuse = (c) => c.lexical;
  /** Today's fusion: lexical rank / best + w × similarity scaled from the POOL-th (0) to the nearest (1). */
  /**
   * Score fusion: lexical rank / best + w × similarity scaled from the POOL-th (0) to the nearest (1).
   * `both` (the service until decision 0010) adds it to lexical hits and brings in new nodes;
   * `lexical-only` only re-orders the lexical hits; `new-only` (the choice) keeps their order and
   * places the nodes only the semantic channel found.
   */
  const scoreFusion =
    (w: number, mode: 'both' | 'lexical-only' | 'new-only' = 'both'): Fuse =>
    (c) => {
      const best = Math.max(...c.lexical.filter((h) => !h.exact).map((h) => h.rank), 0);
      const sims = c.semantic.map((s) => s.sim);
      const top = sims[0]!;
      const floor = sims[sims.length - 1]!;
      const fused = new Map<string, LexicalHit>();
      for (const h of c.lexical) fused.set(h.node_id, { ...h, rank: h.exact ? h.rank : best > 0 ? h.rank / best : 0 });
      c.semantic.forEach((s, i) => {
        const scaled = top > floor ? (sims[i]! - floor) / (top - floor) : 1;
        const before = fused.get(s.id);
        if (before) {
          if (!before.exact && mode !== 'new-only') before.rank += w * scaled;
          return;
        }
        if (mode === 'lexical-only') return;
        const node = c.index.node(s.id);
        if (node) fused.set(s.id, { ...node, exact: false, rank: w * scaled });
      });
      const exact = c.lexical.filter((h) => h.exact);
      return [...exact, ...[...fused.values()].filter((h) => !h.exact).sort((a, b) => b.rank - a.rank)];
    };
  /** Re-rank the lexical pool by w × raw cosine similarity of each hit (no new nodes). */
  const rawRerank =
    (w: number, pool = POOL): Fuse =>
    (c) => {
      const sim = new Map(c.semantic.map((s) => [s.id, s.sim]));
      const best = Math.max(...c.lexical.filter((h) => !h.exact).map((h) => h.rank), 0);
      const exact = c.lexical.filter((h) => h.exact);
      const rest = c.lexical
        .filter((h) => !h.exact)
        .slice(0, pool)
        .map((h) => ({ ...h, rank: (best > 0 ? h.rank / best : 0) + w * (sim.get(h.node_id) ?? 0) }));
      return [...exact, ...rest.sort((a, b) => b.rank - a.rank)];
    };
  /** Weighted RRF of both rankings. */
  const rrf =
    (w: number, k = 60): Fuse =>
    (c) => {
      const score = new Map<string, number>();
      const nodes = new Map<string, LexicalHit>();
      c.lexical
        .filter((h) => !h.exact)
        .forEach((h, i) => {
          score.set(h.node_id, 1 / (k + i + 1));
          nodes.set(h.node_id, h);
        });
      c.semantic.forEach((s, i) => {
        score.set(s.id, (score.get(s.id) ?? 0) + w / (k + i + 1));
        if (!nodes.has(s.id)) {
          const node = c.index.node(s.id);
          if (node) nodes.set(s.id, { ...node, exact: false, rank: 0 });
        }
      });
      const rest = [...nodes.values()]
        .map((h) => ({ ...h, rank: score.get(h.node_id)! }))
        .sort((a, b) => b.rank - a.rank);
      return [...c.lexical.filter((h) => h.exact), ...rest];
    };

  const report = (label: string, fuse: Fuse) => {
    const all = evaluate(cases, fuse);
    const per = ['httpx', 'ky', 'kysely'].map((repo) => {
      const r = evaluate(
        cases.filter((c) => c.repo === repo),
        fuse,
      );
      return `${repo} ${r.mrr.toFixed(3)}/${r.at1.toFixed(3)}`;
    });
    console.log(
      `${label.padEnd(28)} MRR@10 ${all.mrr.toFixed(3)}  top1 ${all.at1.toFixed(3)}  R@20 ${all.recall.toFixed(3)}   ${per.join('  ')}`,
    );
    return all;
  };
  const lex = report('lexical', lexOnly);
  const sem = report('semantic alone', semOnly);
  /** Lexical rank / best + w × (similarity − the pool's last similarity): a flat model adds little. */
  const marginFusion =
    (w: number): Fuse =>
    (c) => {
      const best = Math.max(...c.lexical.filter((h) => !h.exact).map((h) => h.rank), 0);
      const floor = c.semantic[c.semantic.length - 1]!.sim;
      const fused = new Map<string, LexicalHit>();
      for (const h of c.lexical) fused.set(h.node_id, { ...h, rank: h.exact ? h.rank : best > 0 ? h.rank / best : 0 });
      for (const s of c.semantic) {
        const add = w * (s.sim - floor);
        const before = fused.get(s.id);
        if (before) {
          if (!before.exact) before.rank += add;
          continue;
        }
        const node = c.index.node(s.id);
        if (node) fused.set(s.id, { ...node, exact: false, rank: add });
      }
      const exact = c.lexical.filter((h) => h.exact);
      return [...exact, ...[...fused.values()].filter((h) => !h.exact).sort((a, b) => b.rank - a.rank)];
    };
  for (const w of [0.25, 0.5, 1, 2, 3, 5]) report(`margin w=${w}`, marginFusion(w));
  /** Near-ties of the lexical ranking (rank ≥ theta × the best) broken by similarity; the rest as it is. */
  const tieBreak =
    (theta: number): Fuse =>
    (c) => {
      const sim = new Map(c.semantic.map((s) => [s.id, s.sim]));
      const floor = c.semantic[c.semantic.length - 1]!.sim;
      const exact = c.lexical.filter((h) => h.exact);
      const rest = c.lexical.filter((h) => !h.exact);
      const best = rest[0]?.rank ?? 0;
      const tied = rest.filter((h) => h.rank >= theta * best);
      const others = rest.filter((h) => h.rank < theta * best);
      tied.sort((a, b) => (sim.get(b.node_id) ?? floor) - (sim.get(a.node_id) ?? floor) || b.rank - a.rank);
      return [...exact, ...tied, ...others];
    };
  for (const t of [0.98, 0.95, 0.9, 0.85, 0.8, 0.7]) report(`tie-break theta=${t}`, tieBreak(t));
  for (const w of [0.1, 0.2, 0.3, 0.5]) report(`new only w=${w}`, scoreFusion(w, 'new-only'));
  /** The lexical head kept as it is; the rest by score fusion. */
  const tail =
    (head: number, w: number): Fuse =>
    (c) => {
      const kept = c.lexical.slice(0, head);
      const ids = new Set(kept.map((h) => h.node_id));
      const rest = scoreFusion(w)(c).filter((h) => !ids.has(h.node_id));
      return [...kept, ...rest];
    };
  for (const head of [1, 3, 5])
    for (const w of [0.1, 0.2, 0.3, 0.5, 1]) report(`tail head=${head} w=${w}`, tail(head, w));
  for (const w of [0.05, 0.1, 0.2, 0.3, 0.5]) report(`score fusion w=${w}`, scoreFusion(w));
  for (const w of [0.05, 0.1, 0.2, 0.3, 0.5])
    report(`score fusion lexical-only w=${w}`, scoreFusion(w, 'lexical-only'));
  for (const w of [0.1, 0.2, 0.3, 0.5, 1]) report(`raw rerank w=${w}`, rawRerank(w));
  for (const w of [0.1, 0.2, 0.3, 0.5, 1]) report(`rrf w=${w}`, rrf(w));
  if (process.env.RANKS === '1')
    for (const c of cases) {
      if (c.q.category === 'identifier') continue;
      const lr = c.lexical.findIndex((h) => c.q.gold.includes(h.node_id)) + 1;
      const sr = c.semantic.findIndex((h) => c.q.gold.includes(h.id)) + 1;
      console.log(
        `${c.q.id.padEnd(12)} lexical ${String(lr || '-').padStart(3)}  semantic ${String(sr || '-').padStart(3)}`,
      );
    }
  const semWins = sem.wins.filter((id) => !lex.wins.includes(id));
  console.log(`semantic alone answers ${semWins.length} question(s) lexical misses: ${semWins.join(', ')}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
