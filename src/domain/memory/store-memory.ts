import { z } from 'zod';
import { fromDbError } from '../../db/errors.js';
import { notifyChange } from '../../db/change-events.js';
import { findDuplicate } from '../../db/queries/memories/find-duplicate.js';
import { insertMemory, type InsertOutcome, type NewMemory } from '../../db/queries/memories/insert-memory.js';
import type { MemoryRow } from '../../db/queries/memories/memory-row.js';
import { findOrCreatePlan } from '../../db/queries/plans.js';
import { CONTENT_TYPES, type ContentType } from '../../db/schema.js';
import { AppError, validationError } from '../../errors.js';
import type { Context } from '../context.js';
import { newId } from '../ids.js';
import { contentHash, detectFormat, importanceScore, normalizeKeywords } from './classify.js';
import { iso } from '../iso-date.js';
import { writeProject } from '../visibility.js';

export interface StoreMemoryInput {
  content: string;
  content_type: ContentType;
  keywords?: string[] | undefined;
  project?: string | undefined;
}

/** What `devstream_store_memory` returns: its MCP outputSchema and its REST body. */
export const StoreMemoryResultSchema = z.object({
  success: z.boolean(),
  memory_id: z.string(),
  content_type: z.enum(CONTENT_TYPES),
  importance_score: z.number().describe('0.1-1.0: type weight + length and keyword factors'),
  embedding_generated: z.boolean(),
  embedding_model: z.string().nullable(),
  embedding_dimensions: z.number().int().nullable(),
  keywords: z.array(z.string()),
  content_length: z.number().int(),
  source: z.enum(['mcp_user_input']),
  timestamp: z.string().describe('When the memory was stored (ISO 8601)'),
  project: z.string().nullable(),
  duplicate: z.boolean().describe('The same content was already stored in this project; this is that memory'),
  embedding_note: z.string().nullable().describe('Why there is no vector yet (null when there is one)'),
});
export type StoreMemoryResult = z.output<typeof StoreMemoryResultSchema>;

/**
 * Stores a memory in a project (DEFAULT_PROJECT when none, see writeProject; created when no
 * project has that exact name, case-insensitive; FORBIDDEN outside the caller's projects). The embedding is asked for first; when the embedder is down, slow or
 * failing the memory is stored without a vector, queued for the worker, and already findable by
 * keyword. Storing content already stored in the project returns the existing memory.
 */
export async function storeMemory(ctx: Context, input: StoreMemoryInput): Promise<StoreMemoryResult> {
  const project = writeProject(ctx.caller, input.project, ctx.defaultProject);
  const keywords = normalizeKeywords(input.keywords ?? []);
  const hash = contentHash(input.content);

  const { embedder, indexes } = ctx.memory;
  // A memory without a vector that was not just tried: either embeddings are off, or it is queued.
  const pending = embedder.enabled
    ? 'queued: the embedding worker adds the vector when the embedder answers'
    : 'embeddings are disabled (EMBEDDING_PROVIDER=none)';
  // The duplicate check runs while the embedder works: a new memory's store waits for one of them,
  // not both; a duplicate is answered at once and its embedding (tryEmbed never rejects) dropped.
  const embedStarted = performance.now();
  const embedding = embedder.tryEmbed([input.content], 'document');
  const existing = await findDuplicate(ctx.db, project, hash);
  if (existing) return result(existing, true, pending);
  const attempt = await embedding;
  ctx.timing('embed', performance.now() - embedStarted);
  if (attempt.ok) await indexes.ensure(attempt.dims);
  const memory: NewMemory = {
    id: newId(),
    project,
    task_id: null,
    content: input.content,
    content_type: input.content_type,
    content_format: detectFormat(input.content, input.content_type),
    keywords,
    importance_score: importanceScore(input.content_type, input.content, keywords.length),
    content_hash: hash,
    source: 'mcp_user_input',
    embedding: attempt.ok ? { vector: attempt.vectors[0]!, model: attempt.model, dims: attempt.dims } : null,
    enqueue: !attempt.ok && embedder.enabled,
    created_by: ctx.caller.name,
  };

  const outcome = await insertIntoProject(ctx, memory).catch((error: unknown) => {
    throw tooLargeToIndex(error) ?? error;
  });
  if (outcome.kind === 'inserted') {
    if (memory.enqueue) ctx.memory.queued('embedding');
    else if (memory.embedding) ctx.memory.queued('vector');
  }
  const note = attempt.ok ? null : attempt.reason;
  if (note !== null && memory.enqueue && outcome.kind === 'inserted') {
    ctx.notice('warning', `Stored without a vector (${note}); it will be embedded in the background`, {
      memory_id: outcome.memory.id,
    });
  }
  return result(outcome.memory, outcome.kind === 'duplicate', outcome.kind === 'duplicate' ? pending : note);
}

/**
 * Postgres's program limit (54000) on storing a memory: its full-text document (a tsvector, of
 * keywords and content) holds at most 1 MB, about 100,000 distinct words. The content's fault,
 * refused as such; the statement (or transaction) wrote nothing.
 */
function tooLargeToIndex(error: unknown): AppError | undefined {
  if ((error as { code?: unknown } | null)?.code !== '54000') return undefined;
  return validationError([
    {
      field: 'content',
      message:
        'has too many distinct words to index (at most 1 MB of full-text entries per memory): split it into several memories',
    },
  ]);
}

/** Inserts into an existing project in one statement, or creates the project first (one transaction). */
async function insertIntoProject(
  ctx: Context,
  memory: NewMemory,
): Promise<Exclude<InsertOutcome, { kind: 'no-project' }>> {
  // A new memory is announced by the insert itself (memory-changed, at commit).
  const first = await insertMemory(ctx.db, memory);
  if (first.kind !== 'no-project') return first;
  const { outcome, created } = await ctx.db.transaction().execute(async (trx) => {
    let plan;
    try {
      plan = await findOrCreatePlan(trx, { id: newId(), title: memory.project, createdBy: ctx.caller.name });
    } catch (error) {
      const dbError = fromDbError(error);
      if (dbError.status === 503) throw dbError;
      throw new AppError('AUTO_CREATE_FAILED', `could not find or create project "${memory.project}"`, {
        cause: error,
      });
    }
    const second = await insertMemory(trx, memory);
    if (second.kind === 'no-project') throw new Error(`project "${plan.title}" vanished while the memory was stored`);
    // Announced at commit, to every instance.
    if (plan.created) await notifyChange(trx, { type: 'plan-changed', project: plan.title, id: plan.id });
    return { outcome: second, created: plan.created };
  });
  if (created) ctx.notice('info', `Created project "${outcome.memory.project}"`, { project: outcome.memory.project });
  return outcome;
}

function result(row: MemoryRow, duplicate: boolean, note: string | null): StoreMemoryResult {
  // `note` says why there is no vector; ignored when there is one.
  const embedded = row.embedding_model !== null;
  return {
    success: true,
    memory_id: row.id,
    content_type: row.content_type,
    importance_score: Number(row.importance_score),
    embedding_generated: embedded,
    embedding_model: row.embedding_model,
    embedding_dimensions: row.embedding_dims,
    keywords: row.keywords,
    content_length: row.content.length,
    source: 'mcp_user_input',
    timestamp: iso(row.created_at),
    project: row.project,
    duplicate,
    embedding_note: embedded ? null : note,
  };
}
