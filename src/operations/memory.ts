import { z } from 'zod';
import { CONTENT_TYPES } from '../db/schema.js';
import {
  deleteMemory,
  DeleteMemoryResultSchema,
  getMemory,
  GetMemoryResultSchema,
} from '../domain/memory/get-memory.js';
import { renderDeletedMemory, renderSearchResults, renderStoredMemory } from '../domain/memory/render.js';
import { searchMemory, SearchMemoryResultSchema } from '../domain/memory/search-memory.js';
import { storeMemory, StoreMemoryResultSchema } from '../domain/memory/store-memory.js';
import { hexId, name, text, timestamp } from '../domain/fields.js';
import { memoryLink } from '../domain/resource-links.js';
import { defineOperation } from './operation.js';

const MAX_CONTENT = 1_000_000;
const keywords = z.array(text(100, { what: 'keywords', trim: true, nonEmpty: true })).max(50, 'at most 50 keywords');
const contentType = z.enum(CONTENT_TYPES);
const memoryId = z.strictObject({ memory_id: hexId.describe('Memory id (12 hex characters)') });

export const storeMemoryOp = defineOperation({
  name: 'devstream_store_memory',
  title: 'Store memory',
  description:
    'Store a memory (decision, learning, error, code, documentation, context or output) for every agent of the team, ' +
    'with an embedding for semantic search when the embedder is up. Without one it is stored text-only, findable ' +
    'by keyword at once, and embedded in the background. Identical content in the same project is stored once.',
  action: 'storing memory',
  input: z.strictObject({
    content: text(MAX_CONTENT, { what: 'content' })
      .refine((s) => s.trim() !== '', 'content must not be empty')
      .describe('What to remember'),
    content_type: contentType.describe('Kind of content'),
    keywords: keywords.optional().describe('Keywords for retrieval (stored lowercase; at most 50)'),
    project: name('project')
      .optional()
      .describe("Project name (default: the server's DEFAULT_PROJECT); created if missing"),
  }),
  output: StoreMemoryResultSchema,
  scope: 'write',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  routes: [{ method: 'POST', path: '/memories', status: 201 }],
  handler: storeMemory,
  render: renderStoredMemory,
});

export const searchMemoryOp = defineOperation({
  name: 'devstream_search_memory',
  title: 'Search memory',
  description:
    "Search the team's memories: hybrid (vector similarity + keywords, fused by reciprocal rank) or keyword-only when " +
    'the embedder is down; the answer says which ran. Filters (project, content_type, keywords, dates) apply before ranking.',
  action: 'searching memory',
  input: z.strictObject({
    query: text(2000, { what: 'query', trim: true, nonEmpty: true }).describe('What to look for, in words'),
    content_type: contentType.optional().describe('Only memories of this type'),
    limit: z.number().int().min(1).max(50).default(10).describe('Results (1-50, default 10)'),
    project: name('project').optional().describe('Only memories of this project (exact name, case-insensitive)'),
    keywords: keywords.optional().describe('Only memories carrying all of these keywords'),
    created_after: timestamp().optional().describe('Only memories stored at or after this time'),
    created_before: timestamp().optional().describe('Only memories stored before this time'),
  }),
  output: SearchMemoryResultSchema,
  scope: 'read',
  // Not read-only: every hit's access count goes up.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  routes: [{ method: 'POST', path: '/memories/search' }],
  handler: searchMemory,
  render: renderSearchResults,
  links: (out) => out.results.map(memoryLink),
});

export const deleteMemoryOp = defineOperation({
  name: 'devstream_delete_memory',
  title: 'Delete memory',
  description: 'Delete a memory for good (a wrong or secret note): its content, keywords and vector are erased.',
  action: 'deleting memory',
  input: memoryId,
  output: DeleteMemoryResultSchema,
  scope: 'write',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  routes: [{ method: 'DELETE', path: '/memories/:id', params: { id: 'memory_id' } }],
  handler: deleteMemory,
  render: renderDeletedMemory,
});

export const getMemoryOp = defineOperation({
  name: 'devstream_get_memory',
  title: 'Get memory',
  description: 'One memory with its metadata: format, importance, embedding model and dimensions, access counts.',
  action: 'getting memory',
  input: memoryId,
  output: GetMemoryResultSchema,
  scope: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  tool: false,
  routes: [{ method: 'GET', path: '/memories/:id', params: { id: 'memory_id' } }],
  handler: getMemory,
  render: ({ memory }) => JSON.stringify(memory, null, 2),
});

export const memoryOperations = [storeMemoryOp, searchMemoryOp, deleteMemoryOp, getMemoryOp];
