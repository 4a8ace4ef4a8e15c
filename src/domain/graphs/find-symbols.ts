import { z } from 'zod';
import type { Context } from '../context.js';
import { SemanticUseSchema } from './model.js';
import { searchNodes } from './node-search.js';
import { searchTerms } from './search-terms.js';
import { ProvenanceSchema, SymbolHitSchema } from './model.js';
import { provenanceOf, resolveGraph } from './resolve-graph.js';
import { identifierWords } from './search-document.js';
import { STOP_WORDS } from './stop-words.js';

/** What `find_symbols` returns: its MCP outputSchema and its REST body. */
export const FindSymbolsResultSchema = z.object({
  query: z.string(),
  total: z.number().int(),
  origin: z.enum(['index']),
  needsReanalyze: z.boolean(),
  graphId: z.string(),
  repo: z.string(),
  commitHash: z.string(),
  symbols: z.array(SymbolHitSchema),
  semantic: SemanticUseSchema,
  provenance: ProvenanceSchema,
});
export type FindSymbolsResult = z.output<typeof FindSymbolsResultSchema>;

/** The query's identifiers as words: `createUser src/users` → `createuser create user src users`. */
export function queryWords(query: string): string {
  const tokens = query.split(/\s+/).filter(Boolean);
  const words = new Set<string>();
  for (const token of tokens) {
    const lower = token.toLowerCase();
    words.add(lower);
    for (const segment of lower.split(/[^a-z0-9_$]+/)) if (segment) words.add(segment);
    for (const part of identifierWords(token).split(' ')) if (part) words.add(part);
  }
  return [...words].join(' ');
}

/** The parts every strict match must have: the query's identifier words less stop words. */
export function queryParts(query: string): string[] {
  return [
    ...new Set(
      identifierWords(query)
        .split(' ')
        .filter((w) => w && !STOP_WORDS.has(w)),
    ),
  ];
}

/** The arguments of the symbol search (db/queries/graphs/find-symbols.ts findSymbols) for a query. */
export function symbolQuery(query: string, limit: number) {
  return { query: query.trim(), words: queryWords(query), prose: query, limit, parts: queryParts(query) };
}

/** `find_symbols`: cheap symbol lookup by name, path fragment or concept words (spec: devlens-mcp-reference.md). */
export async function findSymbols(
  ctx: Pick<Context, 'db' | 'caller' | 'defaultRepo' | 'graphs' | 'memory' | 'timing'>,
  input: { query: string; limit: number; repo?: string },
): Promise<FindSymbolsResult> {
  const graph = await resolveGraph(ctx, input.repo);
  const index = await ctx.graphs.indexes.get(ctx.db, graph);
  const { hits: rows, semantic } = await searchNodes(ctx, graph, index, searchTerms(input.query), input.limit);
  const best = Math.max(0, ...rows.filter((r) => !r.exact).map((r) => r.rank));
  const symbols = rows.map((r) => ({
    nodeId: r.node_id,
    name: r.name,
    type: r.type,
    filePath: r.file_path,
    startLine: r.start_line,
    endLine: r.end_line,
    relevance: r.exact ? 1 : best > 0 ? Math.round((r.rank / best) * 1000) / 1000 : 0,
    exactMatch: r.exact,
  }));
  return {
    query: input.query,
    total: symbols.length,
    origin: 'index',
    needsReanalyze: false,
    graphId: graph.graphId,
    repo: graph.repo,
    commitHash: graph.commitHash,
    symbols,
    semantic,
    provenance: provenanceOf(graph),
  };
}

export function renderSymbols(out: FindSymbolsResult): string {
  const head = `${out.total} symbol${out.total === 1 ? '' : 's'} for "${out.query}" in ${out.repo} @ ${out.commitHash.slice(0, 10)}`;
  if (out.total === 0) return `${head}. Try other words, or resolve_context for a question in plain words.`;
  const lines = out.symbols.map(
    (s, i) =>
      `${i + 1}. ${s.nodeId}  ${s.type.toLowerCase()}  ${s.filePath}:${s.startLine}-${s.endLine}${s.exactMatch ? '  (exact)' : `  r=${s.relevance}`}`,
  );
  return [head, ...lines].join('\n');
}
