import { z } from 'zod';
import type { MemoryRow } from '../../db/queries/memories/memory-row.js';
import type { SearchHit } from '../../db/queries/memories/search-params.js';
import { CONTENT_FORMATS, CONTENT_TYPES } from '../../db/schema.js';
import { iso, isoOrNull } from '../iso-date.js';

const isoTimestamp = z.iso.datetime({ offset: true }).describe('ISO 8601 timestamp');

/** A memory as GET /api/v1/memories/{id} returns it. */
export const MemorySchema = z.object({
  memory_id: z.string().describe('12 lowercase hex characters'),
  content: z.string(),
  content_type: z.enum(CONTENT_TYPES),
  content_format: z.enum(CONTENT_FORMATS),
  keywords: z.array(z.string()),
  project: z.string().nullable().describe('The project (plan) title'),
  task_id: z.string().nullable().describe('The task whose update notes this memory holds'),
  importance_score: z.number(),
  embedding_model: z.string().nullable(),
  embedding_dimensions: z.number().int().nullable().describe('null while the memory has no vector'),
  access_count: z.number().int(),
  last_accessed_at: isoTimestamp.nullable(),
  created_by: z.string().nullable(),
  created_at: isoTimestamp,
});
export type Memory = z.infer<typeof MemorySchema>;

/** One search hit: the memory and how each branch ranked it. */
export const SearchHitSchema = z.object({
  memory_id: z.string(),
  content: z.string(),
  content_type: z.enum(CONTENT_TYPES),
  project: z.string().nullable(),
  keywords: z.array(z.string()),
  rrf_score: z
    .number()
    .describe(
      "Fused score, 0-1 (the name is historical): the weighted mean of the branches' scores, each scaled to 0-1 (keyword: BM25+ over the best hit's; vector: cosine similarity from the 30th candidate's, 0, to the best's, 1); 1 = first in every branch that ran",
    ),
  vector_rank: z
    .number()
    .int()
    .nullable()
    .describe('Rank in the vector branch (1 = nearest); null when not among its candidates'),
  keyword_rank: z.number().int().nullable().describe('Rank in the keyword branch; null when not among its candidates'),
  distance: z
    .number()
    .nullable()
    .describe('Cosine distance to the query (0 = same direction); null without a vector match'),
  created_at: isoTimestamp,
});
export type Hit = z.infer<typeof SearchHitSchema>;

export function toMemory(row: MemoryRow): Memory {
  return {
    memory_id: row.id,
    content: row.content,
    content_type: row.content_type,
    content_format: row.content_format,
    keywords: row.keywords,
    project: row.project,
    task_id: row.task_id,
    importance_score: Number(row.importance_score),
    embedding_model: row.embedding_model,
    embedding_dimensions: row.embedding_dims,
    access_count: row.access_count,
    last_accessed_at: isoOrNull(row.last_accessed_at),
    created_by: row.created_by,
    created_at: iso(row.created_at),
  };
}

export function toHit(row: SearchHit): Hit {
  return {
    memory_id: row.id,
    content: row.content,
    content_type: row.content_type,
    project: row.project,
    keywords: row.keywords,
    rrf_score: row.rrf_score,
    vector_rank: row.vector_rank,
    keyword_rank: row.keyword_rank,
    distance: row.distance,
    created_at: iso(row.created_at),
  };
}
