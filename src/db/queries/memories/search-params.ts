import type { MemoryRow } from './memory-row.js';
import type { SearchFilters } from './search-filters.js';

export interface SearchParams {
  query: string;
  filters: SearchFilters;
  limit: number;
  /**
   * Candidates per branch. Written into the statement's text (a literal, unlike the other values):
   * with a known LIMIT the planner costs the generic plan right and picks it, so a project's
   * search is planned once per connection instead of on every call (~2.5 ms saved, 100k memories).
   * Callers keep the number of distinct values small: each is a prepared statement per connection.
   */
  k: number;
  /** Absent: keyword-only. */
  vector?: { values: number[]; model: string; dims: number } | undefined;
  /** Weights of the branches' scores in the fused score; `neighbours`: share of the neighbours' keyword scores a hit gains. */
  weights: { vector: number; keyword: number; neighbours: number };
  /** Staged vectors (not yet in the index) the vector branch scans at most, newest first (default STAGED_SCANNED); a literal. */
  staged?: number | undefined;
}

export interface SearchHit extends MemoryRow {
  rrf_score: number;
  vector_rank: number | null;
  keyword_rank: number | null;
  distance: number | null;
}
