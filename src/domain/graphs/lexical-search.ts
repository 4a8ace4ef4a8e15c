import { englishStems } from '../../db/queries/graphs/search-rows.js';
import type { Context } from '../context.js';
import { PATH_PENALTY, type FileKind } from '../../file-kind.js';
import type { IndexedNode, SearchIndex } from './search-index.js';
import { searchTerms, type SearchTerms } from './search-terms.js';

/** A node found by words, with its rank. */
export type LexicalHit = IndexedNode & {
  /** Names one of the query's identifiers exactly (the name, the name after its class, or the id). */
  exact: boolean;
  /** BM25F times the priors and the neighbours' support (0 for a node found by its name alone). */
  rank: number;
};

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
  wholeNameBonus: 2,
  partNameBonus: 1.3,
  askedTypeFactor: 1.5,
  supportNeighbours: 3,
  synonymWeight: 0.5,
};

/** Node types that are a thing an agent looks for; the rest (FILE, ROUTE…) is where they live. */
const CONTAINERS = new Set(['FILE', 'MODULE', 'PACKAGE', 'CLASS', 'INTERFACE', 'STRUCT', 'TRAIT', 'ENUM']);
/** The shortest spelled query (letters and digits) that counts as a run of a longer name. */
const MIN_SPELLED_PART = 6;
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

/** The rank factor of what a node is, for this query (where it lives: kindFactors). */
function prior(c: IndexedNode, terms: SearchTerms): number {
  let p = 1;
  if (!terms.asksContainer && !terms.asksDefinition && !terms.nameLike) {
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
  idf: number;
  /** 1 for a word of the query, RANKING.synonymWeight for a word code may write for one. */
  weight: number;
  /** The query word it is (or stands for): a node covers a word once, whichever spelling it holds. */
  group: number;
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
  const stems = await stemsOf(ctx, [...terms.words, ...terms.synonyms.map((s) => s.word)]);
  const n = Math.max(index.nodes.length, 1);
  const queryTerms: QueryTerm[] = [];
  const groupOf = new Map<string, number>();
  const addTerm = (word: string, group: string, weight: number) => {
    const stem = stems.get(word) ?? null;
    const variants = [...new Set([word, ...(stem ? [stem] : [])])];
    const df = Math.max(...variants.map((v) => index.df(v)));
    if (df === 0) return;
    if (!groupOf.has(group)) groupOf.set(group, groupOf.size);
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    queryTerms.push({ variants, df, idf, weight, group: groupOf.get(group)! });
  };
  for (const word of terms.words) addTerm(word, word, 1);
  // A synonym that the index holds as one of the words' own spellings (a stem) would count it twice.
  const spelled = new Set(queryTerms.flatMap((t) => t.variants));
  for (const s of terms.synonyms)
    if (!spelled.has(s.word) && !spelled.has(stems.get(s.word) ?? s.word)) addTerm(s.word, s.of, RANKING.synonymWeight);
  const idf = queryTerms.map((t) => t.idf);
  // What covering each group is worth: its own word's idf, or (found only by a synonym) the synonym's share.
  const groupIdf = new Float64Array(groupOf.size);
  for (const t of queryTerms) groupIdf[t.group] = Math.max(groupIdf[t.group]!, t.weight === 1 ? t.idf : 0);
  for (const t of queryTerms)
    if (groupIdf[t.group] === 0) groupIdf[t.group] = Math.max(groupIdf[t.group]!, t.weight * t.idf);
  const totalIdf = groupIdf.reduce((a, b) => a + b, 0) || 1;

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
  // The candidates' fields per word, in one flat array (a row of `width` per candidate), sized for
  // the most candidates the choosing words and the exact names can bring.
  const width = queryTerms.length;
  const exact = new Set(terms.identifiers.flatMap((id) => index.named(id)));
  let most = exact.size;
  for (const i of choosing) for (const v of queryTerms[i]!.variants) most += index.df(v);
  const slot = new Int32Array(index.nodes.length).fill(-1);
  const candidates: number[] = [];
  const masks = new Uint8Array(Math.min(most, index.nodes.length) * width);
  const add = (node: number) => {
    let k = slot[node]!;
    if (k === -1) {
      k = candidates.length;
      slot[node] = k;
      candidates.push(node);
    }
    return k;
  };
  // When even the rarest word fills more than the budget, its nodes that also hold the next rarest
  // word are the candidates (all of its nodes if none does).
  const rarest = order[0];
  const next = order[1];
  const holdsNext =
    rarest !== undefined && next !== undefined && queryTerms[rarest]!.df > CANDIDATE_BUDGET
      ? (node: number) => queryTerms[next]!.variants.some((v) => index.fields(v, node) !== 0)
      : null;
  const gather = (keep: ((node: number) => boolean) | null) => {
    for (const i of choosing) {
      for (const v of queryTerms[i]!.variants) {
        const p = index.postingsOf(v);
        if (!p) continue;
        const nodes = p.nodes;
        for (let j = 0; j < nodes.length; j++) {
          const node = nodes[j]!;
          if (keep && !keep(node)) continue;
          masks[add(node) * width + i]! |= p.masks[j]!;
        }
      }
    }
  };
  gather(holdsNext);
  if (holdsNext && candidates.length === 0) gather(null);
  for (const node of exact) add(node);
  // The other words only score the candidates: each one's postings read once (or, for a word far
  // commoner than the candidates are many, each candidate looked up in them).
  queryTerms.forEach((t, i) => {
    if (choosing.has(i)) return;
    for (const v of t.variants) {
      const p = index.postingsOf(v);
      if (!p) continue;
      if (p.nodes.length <= candidates.length * 16) {
        for (let j = 0; j < p.nodes.length; j++) {
          const k = slot[p.nodes[j]!]!;
          if (k !== -1) masks[k * width + i]! |= p.masks[j]!;
        }
      } else {
        for (let k = 0; k < candidates.length; k++) masks[k * width + i]! |= index.fields(v, candidates[k]!);
      }
    }
  });

  // The query's words together, as a name would be written without its case: `combine headers` → combineheaders.
  const joined = terms.words.length > 1 ? terms.words.join('') : '';
  const kindFactor = kindFactors(terms);
  const ranks = new Float64Array(candidates.length);
  const groupCover = new Float64Array(groupOf.size);
  const groupName = new Uint8Array(groupOf.size);
  for (let k = 0; k < candidates.length; k++) {
    const c = index.nodes[candidates[k]!]!;
    let bm25 = 0;
    groupCover.fill(0);
    groupName.fill(0);
    for (let i = 0; i < width; i++) {
      const mask = masks[k * width + i]!;
      if (mask === 0) continue;
      const t = queryTerms[i]!;
      let tf = 0;
      for (let f = 0; f < 4; f++) {
        if (!(mask & (1 << f))) continue;
        const b = RANKING.fieldB[f]!;
        tf += RANKING.fieldWeight[f]! / (1 - b + (b * c.lengths[f]!) / index.avg[f]!);
      }
      bm25 += (t.weight * idf[i]! * (tf * (RANKING.k1 + 1))) / (tf + RANKING.k1);
      groupCover[t.group] = Math.max(groupCover[t.group]!, Math.min(t.weight * idf[i]!, groupIdf[t.group]!));
      if (mask & 1) groupName[t.group] = 1;
    }
    let covered = 0;
    let nameHits = 0;
    for (let g = 0; g < groupCover.length; g++) {
      covered += groupCover[g]!;
      nameHits += groupName[g]!;
    }
    // The share of the name the query covers: `merge headers` prefers mergeHeaders to mergeHeaderContainers.
    const nameShare = Math.min(nameHits / c.nameParts, 1);
    const coverage = RANKING.coverageFloor + (1 - RANKING.coverageFloor) * (covered / totalIdf);
    const whole = (joined !== '' && c.nameKey === joined) || (terms.spelled !== '' && c.nameKey === terms.spelled);
    // Or spells a run of it (`conflict builder` in OnConflictBuilder).
    const part =
      !whole &&
      terms.spelled.length >= MIN_SPELLED_PART &&
      c.nameKey.length > terms.spelled.length &&
      c.nameKey.includes(terms.spelled);
    ranks[k] =
      bm25 *
      coverage *
      (1 + RANKING.nameShareBonus * nameShare) *
      (whole ? RANKING.wholeNameBonus : part ? RANKING.partNameBonus : 1) *
      kindFactor[c.kind] *
      // A query that spells the name asks for that node, container or not.
      (whole ? 1 : prior(c, terms));
  }
  /** The sum of the best RANKING.supportNeighbours ranks among a node's direct callers and callees. */
  const best = new Float64Array(RANKING.supportNeighbours);
  const support = (node: number): number => {
    let kept = 0;
    for (const m of index.near[node]!) {
      const k = slot[m]!;
      if (k === -1) continue;
      const r = ranks[k]!;
      // Insert r into the descending `best[0..kept)`, dropping what falls off the end.
      let at = kept;
      while (at > 0 && best[at - 1]! < r) at--;
      if (at >= best.length) continue;
      for (let j = Math.min(kept, best.length - 1); j > at; j--) best[j] = best[j - 1]!;
      best[at] = r;
      if (kept < best.length) kept++;
    }
    let sum = 0;
    for (let j = 0; j < kept; j++) sum += best[j]!;
    return sum;
  };
  // Exact names first (best scored first), then by rank, score and id; one hit per node id
  // (overloads: the first copy). The best `limit` are kept as they come: no sort of every candidate.
  const score = (node: number) => index.nodes[node]!.score ?? 0;
  const id = (node: number) => index.nodes[node]!.node_id;
  const before = (
    a: { node: number; rank: number; exact: boolean },
    b: { node: number; rank: number; exact: boolean },
  ) =>
    Number(b.exact) - Number(a.exact) ||
    (a.exact && b.exact ? score(b.node) - score(a.node) : 0) ||
    b.rank - a.rank ||
    score(b.node) - score(a.node) ||
    (id(a.node) < id(b.node) ? -1 : id(a.node) > id(b.node) ? 1 : 0);
  const firstCopy = new Map<string, number>();
  for (const node of candidates) {
    if (!index.hasTwin(node)) continue;
    const nodeId = id(node);
    const seen = firstCopy.get(nodeId);
    if (seen === undefined || index.nodes[seen]!.seq > index.nodes[node]!.seq) firstCopy.set(nodeId, node);
  }
  const top: Array<{ node: number; rank: number; exact: boolean }> = [];
  for (let k = 0; k < candidates.length; k++) {
    const node = candidates[k]!;
    if (firstCopy.size > 0 && index.hasTwin(node) && firstCopy.get(id(node)) !== node) continue;
    const isExact = exact.has(node);
    const rank = RANKING.callSupport > 0 ? ranks[k]! + RANKING.callSupport * support(node) : ranks[k]!;
    if (!isExact && rank <= 0) continue;
    const hit = { node, rank, exact: isExact };
    if (top.length === limit && before(hit, top[top.length - 1]!) >= 0) continue;
    let at = top.length;
    while (at > 0 && before(hit, top[at - 1]!) < 0) at--;
    top.splice(at, 0, hit);
    if (top.length > limit) top.pop();
  }
  return top.map((h) => ({ ...index.nodes[h.node]!, exact: h.exact, rank: h.rank }));
}

/** The path factor of each file kind for this query: 1 for the library, and for a kind the query asks for. */
function kindFactors(terms: SearchTerms): Record<FileKind, number> {
  const factor = (kind: Exclude<FileKind, 'source'>) =>
    terms.words.some((w) => ASKS_KIND[kind].test(w)) ? 1 : PATH_PENALTY[kind];
  return { source: 1, test: factor('test'), generated: factor('generated'), auxiliary: factor('auxiliary') };
}
