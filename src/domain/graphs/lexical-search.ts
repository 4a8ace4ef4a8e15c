import { englishStems } from '../../db/queries/graphs/search-rows.js';
import type { Context } from '../context.js';
import { fileKind, PATH_PENALTY, type FileKind } from '../../file-kind.js';
import { lastSegment, type IndexedNode, type SearchIndex } from './search-index.js';
import { searchTerms, type SearchTerms } from './search-terms.js';

/** A node found by words, with its rank. */
export interface LexicalHit {
  seq: number;
  node_id: string;
  name: string;
  type: string;
  file_path: string;
  start_line: number;
  end_line: number;
  score: number | null;
  /** Names one of the query's identifiers exactly (the name, the name after its class, or the id). */
  exact: boolean;
  /** BM25F times the priors (0 for a node found by its name alone). */
  rank: number;
}

/**
 * How many nodes the words that choose candidates may hold together (issue 21: "candidates come
 * rarest-term-first and are scored before any limit"). Bounds a search's cost on a graph whose
 * common words each fill tens of thousands of nodes.
 */
export const CANDIDATE_BUDGET = 5000;

/** BM25F per field — name (with its parts), path and signature, prose, identifiers of the code. */
const FIELD_WEIGHT = [3, 1.2, 1, 0.5];
/** Length normalisation per field: a long identifier list or comment says less per word. */
const FIELD_B = [0.3, 0.5, 0.6, 0.9];
/**
 * The ranking's constants in one place (benchmarks vary them; nothing else writes them): BM25's
 * k1, the floor of the coverage factor, the name-share bonus, the factors of files, other
 * containers and routes, and the line count past which a node is ranked down as long.
 */
export const RANKING = {
  fieldWeight: FIELD_WEIGHT,
  fieldB: FIELD_B,
  k1: 1.2,
  coverageFloor: 0.4,
  nameShareBonus: 0.3,
  fileFactor: 0.6,
  containerFactor: 0.7,
  routeFactor: 0.8,
  longLines: 60,
  longExponent: 0.25,
  callSupport: 0.2,
  wholeNameBonus: 1.5,
  askedTypeFactor: 1.5,
  supportNeighbours: 3,
};

/** Node types that are a thing an agent looks for; the rest (FILE, ROUTE…) is where they live. */
const CONTAINERS = new Set(['FILE', 'MODULE', 'PACKAGE', 'CLASS', 'INTERFACE', 'STRUCT', 'TRAIT', 'ENUM']);
/** A node over this many lines is a container too, whatever its type. */
export const LONG_NODE_LINES = 150;

/** Words that ask for code beside the library: then it is not ranked down. */
const ASKS_KIND: Record<Exclude<FileKind, 'source'>, RegExp> = {
  test: /^(tests?|testing|spec|specs|fixtures?|mocks?)$/,
  generated: /^(generated|declarations?|vendor|vendored|dist|build)$/,
  auxiliary: /^(docs?|documentation|site|website|examples?|playground|bench|benchmarks?|scripts?|demos?)$/,
};

/** Whether a node is a container: a file, class, interface, type, or anything over LONG_NODE_LINES. */
export function isContainer(node: { type: string; start_line: number; end_line: number }): boolean {
  return CONTAINERS.has(node.type) || node.end_line - node.start_line + 1 > LONG_NODE_LINES;
}

/** The rank factor of where a node lives and what it is, for this query. */
function prior(c: IndexedNode, terms: SearchTerms): number {
  const kind = fileKind(c.type, c.file_path);
  let p = 1;
  if (kind !== 'source' && !terms.words.some((w) => ASKS_KIND[kind].test(w))) p *= PATH_PENALTY[kind];
  if (!terms.asksContainer && !terms.asksDefinition) {
    if (c.type === 'FILE' || c.type === 'MODULE' || c.type === 'PACKAGE') p *= RANKING.fileFactor;
    else if (CONTAINERS.has(c.type)) p *= RANKING.containerFactor;
    const lines = c.end_line - c.start_line + 1;
    if (lines > RANKING.longLines) p *= (RANKING.longLines / lines) ** RANKING.longExponent;
  }
  if (c.type === 'ROUTE') p *= RANKING.routeFactor;
  if (terms.askedTypes.includes(c.type)) p *= RANKING.askedTypeFactor;
  return p;
}

/** A word of the query as the index holds it: the word itself and its english stem. */
interface QueryTerm {
  variants: string[];
  /** Nodes holding any variant (at most the sum of the variants' counts). */
  df: number;
}

/** Stems are asked of Postgres (the index holds its stems); words repeat, so they are kept. */
const STEMS = new Map<string, string | null>();
const MAX_STEMS = 20_000;

async function stemsOf(ctx: Pick<Context, 'db'>, words: string[]): Promise<Map<string, string | null>> {
  const missing = words.filter((w) => !STEMS.has(w));
  if (missing.length > 0) {
    const found = await englishStems(ctx.db, missing);
    if (STEMS.size + found.size > MAX_STEMS) STEMS.clear();
    for (const [w, s] of found) STEMS.set(w, s);
  }
  return new Map(words.map((w) => [w, STEMS.get(w) ?? null]));
}

/**
 * Code search by words (issue 21), for find_symbols and resolve_context: the query's identifiers
 * are an exact-name channel; its other words (question words left out) rank every node holding
 * any of them by BM25F over the fields of its search document (name 3, path and signature 1.2,
 * prose 1, identifiers 0.5), each field's length normalised, times the share of the query's idf
 * the node covers, times where the node lives (tests, generated code, documentation sites and
 * examples below the library unless asked for) and what it is (a file, a class or a long node
 * below the functions in it unless the query asks for a container). Exact names come first. The
 * ranking reads nothing of storage order: ties go by node id.
 */
export async function lexicalSearch(
  ctx: Pick<Context, 'db'>,
  index: SearchIndex,
  query: string | SearchTerms,
  limit: number,
): Promise<LexicalHit[]> {
  const terms = typeof query === 'string' ? searchTerms(query) : query;
  const stems = await stemsOf(ctx, terms.words);
  const queryTerms: QueryTerm[] = [];
  for (const word of terms.words) {
    const stem = stems.get(word) ?? null;
    const variants = [...new Set([word, ...(stem ? [stem] : [])])];
    const df = Math.max(...variants.map((v) => index.df(v)));
    if (df > 0) queryTerms.push({ variants, df });
  }
  const n = Math.max(index.nodes.length, 1);
  const idf = queryTerms.map((t) => Math.log(1 + (n - t.df + 0.5) / (t.df + 0.5)));
  const totalIdf = idf.reduce((a, b) => a + b, 0) || 1;

  // Candidates come from the rarest words first, while their nodes fit CANDIDATE_BUDGET (the rarest
  // always): a common word then scores the candidates without bringing in every node that holds it.
  // Which words choose depends on their counts only, never on the order the nodes were stored in.
  const order = queryTerms.map((_, i) => i).sort((a, b) => queryTerms[a]!.df - queryTerms[b]!.df || a - b);
  const choosing = new Set<number>();
  let room = CANDIDATE_BUDGET;
  for (const i of order) {
    if (choosing.size > 0 && queryTerms[i]!.df > room) continue;
    choosing.add(i);
    room -= queryTerms[i]!.df;
  }
  const masks = new Map<number, Uint8Array>();
  for (const i of choosing) {
    for (const v of queryTerms[i]!.variants) {
      index.forEachPosting(v, (node, mask) => {
        let m = masks.get(node);
        if (!m) masks.set(node, (m = new Uint8Array(queryTerms.length)));
        m[i]! |= mask;
      });
    }
  }
  const exact = new Set(terms.identifiers.flatMap((id) => index.named(id)));
  for (const node of exact) if (!masks.has(node)) masks.set(node, new Uint8Array(queryTerms.length));
  queryTerms.forEach((t, i) => {
    if (choosing.has(i)) return;
    for (const [node, m] of masks) for (const v of t.variants) m[i]! |= index.fields(v, node);
  });

  // The query's words together, as a name would be written without its case: `combine headers` → combineheaders.
  const joined = terms.words.length > 1 ? terms.words.join('') : '';
  const ranks = new Map<number, number>();
  for (const [at, m] of masks) {
    const c = index.nodes[at]!;
    let bm25 = 0;
    let covered = 0;
    let nameHits = 0;
    for (let i = 0; i < m.length; i++) {
      const mask = m[i]!;
      if (mask === 0) continue;
      let tf = 0;
      for (let f = 0; f < 4; f++) {
        if (!(mask & (1 << f))) continue;
        const b = RANKING.fieldB[f]!;
        tf += RANKING.fieldWeight[f]! / (1 - b + (b * c.lengths[f]!) / index.avg[f]!);
      }
      bm25 += (idf[i]! * (tf * (RANKING.k1 + 1))) / (tf + RANKING.k1);
      covered += idf[i]!;
      if (mask & 1) nameHits++;
    }
    // The share of the name the query covers: `merge headers` prefers mergeHeaders to mergeHeaderContainers.
    const nameShare = Math.min(nameHits / c.nameParts, 1);
    const coverage = RANKING.coverageFloor + (1 - RANKING.coverageFloor) * (covered / totalIdf);
    const whole =
      joined !== '' &&
      lastSegment(c.name)
        .toLowerCase()
        .replace(/[^a-z0-9]/g, '') === joined;
    ranks.set(
      at,
      bm25 *
        coverage *
        (1 + RANKING.nameShareBonus * nameShare) *
        (whole ? RANKING.wholeNameBonus : 1) *
        prior(c, terms),
    );
  }
  /** The sum of the best RANKING.supportNeighbours ranks among a node's direct callers and callees. */
  const support = (at: number): number => {
    const best: number[] = [];
    const seen = new Set<number>();
    for (const list of [index.calls[at]!, index.callers[at]!]) {
      for (const m of list) {
        if (seen.has(m)) continue;
        seen.add(m);
        const r = ranks.get(m);
        if (r === undefined) continue;
        let k = best.length;
        while (k > 0 && best[k - 1]! < r) k--;
        if (k < RANKING.supportNeighbours) {
          best.splice(k, 0, r);
          if (best.length > RANKING.supportNeighbours) best.pop();
        }
      }
    }
    return best.reduce((a, b) => a + b, 0);
  };
  // One hit per node id (overloads: the first copy), then exact names first, best rank first, ids last.
  const byId = new Map<string, { at: number; rank: number; exact: boolean }>();
  for (const [at, own] of ranks) {
    const rank = RANKING.callSupport > 0 ? own + RANKING.callSupport * support(at) : own;
    const isExact = exact.has(at);
    if (!isExact && rank <= 0) continue;
    const id = index.nodes[at]!.node_id;
    const before = byId.get(id);
    if (!before || index.nodes[before.at]!.seq > index.nodes[at]!.seq) byId.set(id, { at, rank, exact: isExact });
  }
  const score = (at: number) => index.nodes[at]!.score ?? 0;
  return [...byId.entries()]
    .sort(
      ([idA, a], [idB, b]) =>
        Number(b.exact) - Number(a.exact) ||
        (a.exact && b.exact ? score(b.at) - score(a.at) : 0) ||
        b.rank - a.rank ||
        score(b.at) - score(a.at) ||
        (idA < idB ? -1 : idA > idB ? 1 : 0),
    )
    .slice(0, limit)
    .map(([, h]) => ({ ...index.nodes[h.at]!, exact: h.exact, rank: h.rank }));
}
