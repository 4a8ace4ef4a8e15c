import { nodeSummaries } from '../../db/queries/graphs/hook-nodes.js';
import { findSymbols } from '../graphs/find-symbols.js';
import { searchMemory } from '../memory/search-memory.js';
import { ContextBudget } from './context-budget.js';
import { given, notGivenYet, type HookCall } from './hook-call.js';
import { memoryItem, memoryLine, nodeItem, symbolLine } from './hook-lines.js';

/** Prompts of fewer words get nothing ("yes", "go on", "/compact"): there is nothing to search for. */
export const MIN_PROMPT_WORDS = 3;
/** Memories a prompt is given at most (as many as search_memory's default page). */
const MEMORIES = 10;
/** Characters of a prompt searched: its start says what it is about. */
const PROMPT_CHARS = 1000;
/** Identifiers of a prompt looked up, and symbols shown per identifier. */
const IDENTIFIERS = 4;
const SYMBOLS_EACH = 2;

/**
 * Words of a prompt that name code: `backticked` text, dotted or snake_case names, camelCase and
 * PascalCase-with-a-hump words, file names with an extension. In order, distinct, at most four.
 */
export function identifiersIn(prompt: string): string[] {
  const found: string[] = [];
  const add = (word: string) => {
    const w = word.trim().replace(/^[./]+|[.,:;!?()]+$/g, '');
    if (w.length >= 3 && w.length <= 120 && !found.includes(w)) found.push(w);
  };
  for (const m of prompt.matchAll(/`([^`\n]{2,120})`/g)) add(m[1]!);
  const unquoted = prompt.replace(/`[^`\n]*`/g, ' ');
  for (const m of unquoted.matchAll(/[A-Za-z_$][\w$]*(?:(?:\.|::|\/)[A-Za-z_$][\w$-]*)+|[A-Za-z_$][\w$]*/g)) {
    const w = m[0];
    const code =
      /[._:/]/.test(w.replace(/^_+|_+$/g, '')) || // dotted, snake_case, a::path or a/path
      /^[a-z]+[A-Z]/.test(w) || // camelCase
      /^[A-Z][a-z0-9]+[A-Z]/.test(w); // PascalCase with a hump (not a sentence's first word)
    if (code) add(w);
  }
  return found.slice(0, IDENTIFIERS);
}

/**
 * UserPromptSubmit: the code symbols the prompt names (when the session has a code graph), then the
 * memories that hybrid search finds for it in the project, within the budget, leaving out what this
 * session was given already.
 */
export async function promptContext(call: HookCall): Promise<string> {
  const { ctx, scope } = call;
  const prompt = (call.input.prompt ?? '').trim();
  if (prompt.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length < MIN_PROMPT_WORDS) return '';
  const query = prompt.slice(0, PROMPT_CHARS);
  const identifiers = scope.graph ? identifiersIn(prompt) : [];
  const [memories, symbolLists] = await Promise.all([
    scope.projectExists
      ? searchMemory(ctx, { query, project: scope.project, limit: MEMORIES })
      : Promise.resolve({ results: [] }),
    Promise.all(
      identifiers.map((id) =>
        findSymbols(ctx, { query: id, limit: SYMBOLS_EACH, repo: scope.graph!.graphId }).then((r) =>
          r.symbols.filter((s) => s.exactMatch || s.relevance >= 0.5),
        ),
      ),
    ),
  ]);
  const symbols = [...new Map(symbolLists.flat().map((s) => [s.nodeId, s])).values()];
  const graph = scope.graph;
  const items = [
    ...(graph ? symbols.map((s) => nodeItem(graph.graphId, s.nodeId)) : []),
    ...memories.results.map((m) => memoryItem(m.memory_id)),
  ];
  const fresh = await notGivenYet(call, items);
  const budget = new ContextBudget(
    call.settings.contextTokens,
    `DevStream Hub (team memory) for this prompt, project "${scope.project}":`,
  );
  const shown: string[] = [];
  if (graph) {
    const newSymbols = symbols.filter((s) => fresh.has(nodeItem(graph.graphId, s.nodeId)));
    const summaries = await nodeSummaries(
      ctx.db,
      graph,
      newSymbols.map((s) => s.nodeId),
    );
    budget.heading(`Code the prompt names (${graph.repo} @ ${graph.commitHash.slice(0, 10)}):`);
    for (const s of newSymbols) {
      const line = symbolLine(s, summaries.get(s.nodeId));
      if (budget.add(line)) shown.push(nodeItem(graph.graphId, s.nodeId));
    }
  }
  budget.heading('Memories that may bear on it (devstream_get_memory for one in full):');
  for (const m of memories.results) {
    if (!fresh.has(memoryItem(m.memory_id))) continue;
    if (budget.add(memoryLine(m))) shown.push(memoryItem(m.memory_id));
  }
  await given(call, shown);
  return budget.text();
}
