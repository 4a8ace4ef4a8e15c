import type { Context } from '../context.js';
import { fileKind } from '../../file-kind.js';
import { neighbours } from '../../db/queries/graphs/edge-reads.js';
import { isContainer, type LexicalHit } from './lexical-search.js';
import { lastSegment, type IndexedNode, type SearchIndex } from './search-index.js';
import type { SearchTerms } from './search-terms.js';

/**
 * What answers a question, among ranked hits (issue 21, item 3) — find_symbols' first symbol and
 * resolve_context's ANSWER alike: the member that does the thing rather than the container that
 * holds it, the kind of container a question names, the caller a caller question asks for.
 */

/** How far down the hits a member of a container answer is looked for, and how close its rank must be. */
const MEMBER_WINDOW = 10;
const MEMBER_SHARE = 0.45;
/** How close to the best hit a node of the type a question asks for must rank to answer it. */
const ASKED_TYPE_SHARE = 0.3;
/** Direct callers of a caller question's subject read at most. */
const MAX_CALLERS = 200;

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
  // A query that spells the best hit's name (`order by item builder`) asks for it, container or not.
  if (
    terms.spelled !== '' &&
    lastSegment(top.name)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '') === terms.spelled
  )
    return 0;
  if (terms.asksContainer) {
    // "which class…": the best hit of the kind asked for, when one ranks near the top.
    if (terms.askedTypes.includes(top.type)) return 0;
    for (let i = 1; i < Math.min(hits.length, MEMBER_WINDOW); i++) {
      if (hits[i]!.rank < top.rank * ASKED_TYPE_SHARE) break;
      if (terms.askedTypes.includes(hits[i]!.type)) return i;
    }
    return 0;
  }
  if (terms.asksDefinition || terms.nameLike || !isContainer(top)) return 0;
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
export async function mainCaller(
  ctx: Pick<Context, 'db'>,
  g: { graphId: string; commitHash: string },
  index: SearchIndex,
  subject: LexicalHit,
  hits: LexicalHit[],
): Promise<LexicalHit | null> {
  const position = new Map(hits.map((h, i) => [h.node_id, i]));
  const callers = (await neighbours(ctx.db, g, subject.node_id, 'in', MAX_CALLERS)).rows
    .map((d) => index.node(d.node_id))
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

/** How many of the best hits a concept question's class is read from, and how many must be its members. */
const CONCEPT_WINDOW = 3;
const CONCEPT_MEMBERS = 2;

/**
 * For a question about what a thing is ("what is the part that walks the query tree…"), the class
 * most of the best hits are methods of: the question describes what the class does, and its
 * methods each hold a piece of it. Null when no class holds CONCEPT_MEMBERS of the first
 * CONCEPT_WINDOW hits, or when the best hit is an exact name (and not asked when the question
 * asks for a function: ASKS_FUNCTION).
 */
function commonClass(index: SearchIndex, hits: LexicalHit[]): LexicalHit | null {
  if (!hits[0] || hits[0].exact) return null;
  const counts = new Map<string, number>();
  for (const h of hits.slice(0, CONCEPT_WINDOW)) {
    if (h.type !== 'METHOD') continue;
    const dot = h.node_id.lastIndexOf('.');
    if (dot <= h.node_id.indexOf('::')) continue;
    const owner = h.node_id.slice(0, dot);
    counts.set(owner, (counts.get(owner) ?? 0) + 1);
  }
  for (const [owner, n] of counts) {
    if (n < CONCEPT_MEMBERS) continue;
    const node = index.node(owner);
    if (!node || !CLASS_TYPES.has(node.type)) continue;
    return hits.find((h) => h.node_id === owner) ?? { ...node, exact: false, rank: hits[0].rank };
  }
  return null;
}

const CLASS_TYPES = new Set(['CLASS', 'INTERFACE', 'STRUCT', 'TRAIT']);
/** "what is the function that…": a definition question that asks for a function, not its class. */
const ASKS_FUNCTION = /\b(?:functions?|methods?|helpers?|callbacks?|routines?)\b/i;

/**
 * The hits in the order that answers the question: pickAnswer's hit first, and for a caller
 * question the main caller of that hit before it.
 */
export async function shapeAnswer(
  ctx: Pick<Context, 'db'>,
  g: { graphId: string; commitHash: string },
  index: SearchIndex,
  hits: LexicalHit[],
  terms: SearchTerms,
): Promise<LexicalHit[]> {
  const answer = pickAnswer(hits, terms);
  let shaped = answer === 0 ? hits : [hits[answer]!, ...hits.filter((_, i) => i !== answer)];
  const whole =
    terms.asksDefinition && !ASKS_FUNCTION.test(terms.text.slice(0, 300)) ? commonClass(index, shaped) : null;
  if (whole) shaped = [whole, ...shaped.filter((h) => h.node_id !== whole.node_id)];
  const subject = shaped[0];
  if (terms.asksCallers && subject && !subject.exact) {
    const caller = await mainCaller(ctx, g, index, subject, shaped);
    if (caller) shaped = [caller, ...shaped.filter((h) => h.node_id !== caller.node_id)];
  }
  return shaped;
}
