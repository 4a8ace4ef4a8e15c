import { z } from 'zod';
import { deleteMemory as deleteMemoryRow } from '../../db/queries/memories/delete-memory.js';
import { getMemory as getMemoryRow } from '../../db/queries/memories/get-memory.js';
import { notFound } from '../../errors.js';
import { announce } from '../announce.js';
import type { Context } from '../context.js';
import { MemorySchema, toMemory, type Memory } from './model.js';
import { visibleProjects } from '../visibility.js';

/** What `devstream_get_memory` returns (GET /api/v1/memories/{id}). */
export const GetMemoryResultSchema = z.object({ memory: MemorySchema });
export type GetMemoryResult = z.output<typeof GetMemoryResultSchema>;

/** Memory ids are 12 lowercase hex characters (ids.ts). */
const MEMORY_ID = /^[0-9a-f]{12}$/;

/**
 * A live memory as devstream_get_memory gives it (the `devstream://memory/{id}` resource), or null
 * when there is none (deleted, of a project the caller may not see, or the id cannot be one).
 * Reading it is not a search hit: no access is counted.
 */
export async function findMemory(ctx: Pick<Context, 'db' | 'caller'>, id: string): Promise<Memory | null> {
  if (!MEMORY_ID.test(id)) return null;
  const row = await getMemoryRow(ctx.db, id, visibleProjects(ctx.caller));
  return row ? toMemory(row) : null;
}

/** One live memory; NOT_FOUND for one of a project the caller may not see, as for none. */
export async function getMemory(ctx: Context, input: { memory_id: string }): Promise<GetMemoryResult> {
  const id = input.memory_id.toLowerCase();
  const row = await getMemoryRow(ctx.db, id, visibleProjects(ctx.caller));
  if (!row) throw notFound(`memory_id: no memory with id "${id}"`, { memory_id: id });
  return { memory: toMemory(row) };
}

/** What `devstream_delete_memory` returns: its MCP outputSchema and its REST body. */
export const DeleteMemoryResultSchema = z.object({ success: z.boolean(), memory_id: z.string() });
export type DeleteMemoryResult = z.output<typeof DeleteMemoryResultSchema>;

/**
 * Deletes a memory for good: its content, keywords and vector are erased (a tombstone keeps the
 * id). One of a project the caller may not see is NOT_FOUND, and stays.
 */
export async function deleteMemory(ctx: Context, input: { memory_id: string }): Promise<DeleteMemoryResult> {
  const id = input.memory_id.toLowerCase();
  const deleted = await deleteMemoryRow(ctx.db, id, visibleProjects(ctx.caller));
  if (!deleted) throw notFound(`memory_id: no memory with id "${id}"`, { memory_id: id });
  await announce(ctx, { type: 'memory-changed', project: deleted.project ?? '', id });
  return { success: true, memory_id: id };
}
