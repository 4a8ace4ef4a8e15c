import { posix } from 'node:path';
import { fileSymbols, nodeSummaries } from '../../db/queries/graphs/hook-nodes.js';
import { findSymbols } from '../graphs/find-symbols.js';
import { searchMemory } from '../memory/search-memory.js';
import { ContextBudget } from './context-budget.js';
import { given, notGivenYet, type HookCall } from './hook-call.js';
import { memoryItem, memoryLine, nodeItem, nodeLine, symbolLine } from './hook-lines.js';

/** Symbols of a read file shown at most, and memories about it. */
const FILE_SYMBOLS = 6;
const FILE_MEMORIES = 5;
/** Symbols a search pattern is given at most. */
const PATTERN_SYMBOLS = 6;

/** The tools whose use gets context before it runs. */
const TOOLS = new Set(['Read', 'Grep', 'Glob']);

/** A path as the graph stores it: relative to the working folder, forward slashes, no `./`. */
export function repoPath(file: string, cwd: string | undefined): string {
  const path = file.replace(/\\/g, '/');
  const root = cwd?.replace(/\\/g, '/').replace(/\/+$/, '');
  const relative = root && path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path;
  return posix.normalize(relative).replace(/^\.\//, '');
}

/**
 * The words of a Grep or Glob pattern worth a symbol search: runs of letters, digits and `_` of
 * three or more, without regex escapes and glob wildcards; "" when none.
 */
export function patternWords(pattern: string): string {
  const words = pattern.replace(/\\[a-zA-Z]/g, ' ').match(/[A-Za-z_][A-Za-z0-9_]{2,}/g);
  return (words ?? [])
    .filter((w) => !/^(ts|tsx|js|jsx|py|go|rs|java|md|json)$/i.test(w))
    .slice(0, 6)
    .join(' ');
}

/**
 * PreToolUse on Read, Grep and Glob. A file about to be read: the memories that mention it (by
 * path or name) and its main symbols with their summaries. A search pattern: the symbols it matches.
 * Anything else, or nothing new for this session: no context.
 */
export async function toolContext(call: HookCall): Promise<string> {
  const { ctx, scope, input } = call;
  const tool = input.tool_name ?? '';
  if (!TOOLS.has(tool)) return '';
  const args = input.tool_input ?? {};
  const graph = scope.graph;
  if (tool === 'Read') {
    if (typeof args.file_path !== 'string' || !args.file_path.trim()) return '';
    const path = repoPath(args.file_path, input.cwd);
    const name = posix.basename(path);
    const [symbols, memories] = await Promise.all([
      graph ? fileSymbols(ctx.db, graph, path, FILE_SYMBOLS) : Promise.resolve([]),
      scope.projectExists
        ? searchMemory(ctx, { query: `${path} ${name}`, project: scope.project, limit: 20 })
        : Promise.resolve({ results: [] }),
    ]);
    // Full text search reads a path or a file name as one word ('source/core/backoff.ts', 'backoff.ts'):
    // the query finds memories holding either; one mentions the file when its text holds its name.
    const lowerName = name.toLowerCase();
    const mentioning = memories.results
      .filter((m) => m.content.toLowerCase().includes(lowerName))
      .slice(0, FILE_MEMORIES);
    const items = [
      ...mentioning.map((m) => memoryItem(m.memory_id)),
      ...(graph ? symbols.map((s) => nodeItem(graph.graphId, s.node_id)) : []),
    ];
    const fresh = await notGivenYet(call, items);
    const budget = new ContextBudget(call.settings.contextTokens, `DevStream Hub (team memory) on ${path}:`);
    const shown: string[] = [];
    budget.heading('Memories that mention it:');
    for (const m of mentioning) {
      if (fresh.has(memoryItem(m.memory_id)) && budget.add(memoryLine(m))) shown.push(memoryItem(m.memory_id));
    }
    if (graph) {
      budget.heading(`Its main symbols (${graph.repo} @ ${graph.commitHash.slice(0, 10)}):`);
      for (const s of symbols) {
        if (fresh.has(nodeItem(graph.graphId, s.node_id)) && budget.add(nodeLine(s)))
          shown.push(nodeItem(graph.graphId, s.node_id));
      }
    }
    await given(call, shown);
    return budget.text();
  }
  // Grep and Glob: symbols matching the pattern's words.
  if (!graph || typeof args.pattern !== 'string') return '';
  const words = patternWords(args.pattern);
  if (!words) return '';
  const found = await findSymbols(ctx, { query: words, limit: PATTERN_SYMBOLS, repo: graph.graphId });
  const fresh = await notGivenYet(
    call,
    found.symbols.map((s) => nodeItem(graph.graphId, s.nodeId)),
  );
  const newSymbols = found.symbols.filter((s) => fresh.has(nodeItem(graph.graphId, s.nodeId)));
  const summaries = await nodeSummaries(
    ctx.db,
    graph,
    newSymbols.map((s) => s.nodeId),
  );
  const budget = new ContextBudget(
    call.settings.contextTokens,
    `DevStream Hub: symbols matching "${words}" in ${graph.repo} @ ${graph.commitHash.slice(0, 10)}:`,
  );
  const shown: string[] = [];
  for (const s of newSymbols) {
    const line = symbolLine(s, summaries.get(s.nodeId));
    if (budget.add(line)) shown.push(nodeItem(graph.graphId, s.nodeId));
  }
  await given(call, shown);
  return budget.text();
}
