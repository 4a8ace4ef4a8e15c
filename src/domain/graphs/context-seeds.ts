import { fileNodes, nodesByIds } from '../../db/queries/graphs/node-reads.js';
import { nodesNamed } from '../../db/queries/graphs/nodes-by-name.js';
import type { Context } from '../context.js';
import { fileKind } from '../../file-kind.js';
import { walk } from './impact.js';
import { isContainer, type LexicalHit } from './lexical-search.js';
import { searchNodes, type SemanticUse } from './node-search.js';
import type { IndexedNode, SearchIndex } from './search-index.js';
import { searchTerms, type SearchTerms } from './search-terms.js';

/** Lexical hits ranked for a packet: the seeds, then the lexical channel of the rest. */
const LEXICAL_HITS = 30;
const LEXICAL_SEEDS = 3;
/** Focus entries read at most. */
export const MAX_FOCUS = 10;
/** Nodes a symbol name in the focus stands for at most: the best scored first. */
const PER_FOCUS_NAME = 3;
/** How far down the hits a member of a container answer is looked for, and how close its rank must be. */
const MEMBER_WINDOW = 10;
const MEMBER_SHARE = 0.45;
/** How close to the best hit a node of the type a question asks for must rank to answer it. */
const ASKED_TYPE_SHARE = 0.3;

/** What the task and focus select: the focus's nodes, the ranked hits (the ANSWER first), the seeds. */
export interface ContextSeeds {
  focusIds: string[];
  /** Focus entries that named nothing in the graph. */
  unknownFocus: string[];
  lexical: LexicalHit[];
  seeds: string[];
  terms: SearchTerms;
  semantic: SemanticUse;
}

/** Whether `member` lies inside `container` (its file and lines, or its id under the container's). */
function inside(member: LexicalHit, container: LexicalHit): boolean {
  if (member.node_id.startsWith(`${container.node_id}.`)) return true;
  if (container.type === 'FILE') return member.file_path === container.file_path && member.type !== 'FILE';
  return (
    member.file_path === container.file_path &&
    member.start_line >= container.start_line &&
    member.end_line <= container.end_line &&
    member.node_id !== container.node_id
  );
}

/**
 * The hit that answers the question (issue 21, item 3): the best hit, unless it is a container — a
 * file, a class, a type or a node over LONG_NODE_LINES — and the question is not about a container:
 * then the best of its members among the next hits that ranks close to it (what does the thing,
 * rather than what holds it). A question that names a kind of container ("which class…") is
 * answered by the best hit of that kind near the top. An exact name always answers.
 */
export function pickAnswer(hits: LexicalHit[], terms: SearchTerms): number {
  const top = hits[0];
  if (!top || top.exact) return 0;
  if (terms.asksContainer) {
    // "which class…": the best hit of the kind asked for, when one ranks near the top.
    if (terms.askedTypes.includes(top.type)) return 0;
    for (let i = 1; i < Math.min(hits.length, MEMBER_WINDOW); i++) {
      if (hits[i]!.rank < top.rank * ASKED_TYPE_SHARE) break;
      if (terms.askedTypes.includes(hits[i]!.type)) return i;
    }
    return 0;
  }
  if (!isContainer(top)) return 0;
  for (let i = 1; i < Math.min(hits.length, MEMBER_WINDOW); i++) {
    const h = hits[i]!;
    if (h.rank < top.rank * MEMBER_SHARE) break;
    if (!isContainer(h) && inside(h, top)) return i;
  }
  return 0;
}

/**
 * For a question about who calls something, the caller that answers it: among the direct callers
 * of the node the question describes (CALLS and other upstream edges, GHOSTs, files and tests left
 * out), the one the question's words rank best, else the best scored, else the first by id.
 */
async function mainCaller(
  ctx: Pick<Context, 'db'>,
  g: { graphId: string; commitHash: string },
  index: SearchIndex,
  subject: LexicalHit,
  hits: LexicalHit[],
): Promise<LexicalHit | null> {
  const position = new Map(hits.map((h, i) => [h.node_id, i]));
  const callers = (await walk(ctx, g, subject.node_id, 'upstream', 1))
    .map((d) => index.node(d.nodeId))
    .filter((n): n is IndexedNode => n !== undefined && n.type !== 'FILE' && fileKind(n.type, n.file_path) !== 'test');
  if (callers.length === 0) return null;
  callers.sort(
    (a, b) =>
      (position.get(a.node_id) ?? Infinity) - (position.get(b.node_id) ?? Infinity) ||
      (b.score ?? 0) - (a.score ?? 0) ||
      a.node_id.localeCompare(b.node_id),
  );
  const best = callers[0]!;
  return hits.find((h) => h.node_id === best.node_id) ?? { ...best, exact: false, rank: subject.rank };
}

/**
 * resolve_context's seeds: the focus (node ids, file paths, symbol names — a name gives its best
 * scored PER_FOCUS_NAME nodes; an entry that names nothing is reported, not dropped silently),
 * then the answer and the next best hits of the task's lexical search, without repeats.
 */
export async function contextSeeds(
  ctx: Pick<Context, 'db' | 'graphs' | 'memory' | 'timing'>,
  g: { graphId: string; commitHash: string; uploadedAt: string },
  task: string,
  focus: string[],
): Promise<ContextSeeds> {
  const focusIds: string[] = [];
  const unknownFocus: string[] = [];
  for (const f of focus.slice(0, MAX_FOCUS)) {
    const direct = await nodesByIds(ctx.db, g, [f]);
    if (direct.length) {
      focusIds.push(f);
      continue;
    }
    const files = await fileNodes(ctx.db, g, [f.replace(/^\.?\//, '')]);
    const found = files.length ? files : await nodesNamed(ctx.db, g, f, PER_FOCUS_NAME);
    if (found.length) focusIds.push(...found);
    else unknownFocus.push(f);
  }
  const terms = searchTerms(task);
  const index = await ctx.graphs.indexes.get(ctx.db, g);
  const { hits, semantic } = await searchNodes(ctx, g, index, terms, LEXICAL_HITS);
  const answer = pickAnswer(hits, terms);
  let lexical = answer === 0 ? hits : [hits[answer]!, ...hits.filter((_, i) => i !== answer)];
  const subject = lexical[0];
  if (terms.asksCallers && subject && !subject.exact) {
    const caller = await mainCaller(ctx, g, index, subject, lexical);
    if (caller) lexical = [caller, ...lexical.filter((h) => h.node_id !== caller.node_id)];
  }
  const seeds = [...new Set([...focusIds, ...lexical.slice(0, LEXICAL_SEEDS).map((h) => h.node_id)])];
  return { focusIds: [...new Set(focusIds)], unknownFocus, lexical, seeds, terms, semantic };
}
