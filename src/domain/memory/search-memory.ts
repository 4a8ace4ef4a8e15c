import { z } from 'zod';
import { searchMemories } from '../../db/queries/memories/hybrid-search.js';
import type { SearchFilters } from '../../db/queries/memories/search-filters.js';
import type { ContentType } from '../../db/schema.js';
import type { Context } from '../context.js';
import { normalizeKeywords } from './classify.js';
import { SearchHitSchema, toHit } from './model.js';
import { visibleProjects } from '../visibility.js';

export interface SearchMemoryInput {
  query: string;
  content_type?: ContentType | undefined;
  limit: number;
  project?: string | undefined;
  keywords?: string[] | undefined;
  created_after?: string | undefined;
  created_before?: string | undefined;
}

/** What `devstream_search_memory` returns: its MCP outputSchema and its REST body. */
export const SearchMemoryResultSchema = z.object({
  query: z.string(),
  method: z.enum(['hybrid', 'keyword']),
  method_note: z.string().nullable().describe('Why the search ran keyword-only (null for hybrid)'),
  total: z.number().int(),
  results: z.array(SearchHitSchema),
});
export type SearchMemoryResult = z.output<typeof SearchMemoryResultSchema>;

/**
 * Candidates each branch ranks before fusion: three times the limit, at least 30, rounded up to a
 * multiple of 30 — five values for limits 1–50, because each is its own prepared statement (see
 * SearchParams.k).
 */
export function candidatesFor(limit: number): number {
  return Math.ceil(Math.max(30, limit * 3) / 30) * 30;
}

/**
 * Hybrid search (vector + keyword, fused by score) over live memories, or keyword-only when the query
 * cannot be embedded. Filters apply inside both branches before their limits; an unknown project,
 * or one the caller may not see, matches nothing. Every hit's access count goes up by one (written within a second, in a batch).
 */
export async function searchMemory(ctx: Context, input: SearchMemoryInput): Promise<SearchMemoryResult> {
  const { embedder, weights, stagedScanned } = ctx.memory;
  const filters: SearchFilters = {
    project: input.project,
    projects: visibleProjects(ctx.caller),
    content_type: input.content_type,
    keywords: input.keywords ? normalizeKeywords(input.keywords) : undefined,
    created_after: input.created_after,
    created_before: input.created_before,
  };
  // The keyword branch starts while the query is embedded (searchMemories).
  const embedStarted = performance.now();
  const embedding = embedder.tryEmbed([input.query], 'query').then((attempt) => {
    ctx.timing('embed', performance.now() - embedStarted);
    return attempt;
  });
  const hits = await searchMemories(
    ctx.db,
    { query: input.query, filters, limit: input.limit, k: candidatesFor(input.limit), weights, staged: stagedScanned },
    embedding.then((attempt) =>
      attempt.ok ? { values: attempt.vectors[0]!, model: attempt.model, dims: attempt.dims } : undefined,
    ),
  );
  const attempt = await embedding;
  ctx.memory.accesses.record(hits.map((h) => h.id));
  if (!attempt.ok && embedder.enabled) ctx.notice('warning', `Searched by keyword only: ${attempt.reason}`);
  return {
    query: input.query,
    method: attempt.ok ? 'hybrid' : 'keyword',
    method_note: attempt.ok ? null : attempt.reason,
    total: hits.length,
    results: hits.map(toHit),
  };
}
