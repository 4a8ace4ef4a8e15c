import { deleteMemory as deleteMemoryRow } from '../../db/queries/memories/delete-memory.js';
import { getMemory as getMemoryRow } from '../../db/queries/memories/get-memory.js';
import { notFound } from '../../errors.js';
import type { Context } from '../context.js';
import { toMemory, type Memory } from './model.js';

export async function getMemory(ctx: Context, input: { memory_id: string }): Promise<{ memory: Memory }> {
  const id = input.memory_id.toLowerCase();
  const row = await getMemoryRow(ctx.db, id);
  if (!row) throw notFound(`memory_id: no memory with id "${id}"`, { memory_id: id });
  return { memory: toMemory(row) };
}

/** Deletes a memory for good: its content, keywords and vector are erased (a tombstone keeps the id). */
export async function deleteMemory(
  ctx: Context,
  input: { memory_id: string },
): Promise<{ success: true; memory_id: string }> {
  const id = input.memory_id.toLowerCase();
  if (!(await deleteMemoryRow(ctx.db, id))) throw notFound(`memory_id: no memory with id "${id}"`, { memory_id: id });
  return { success: true, memory_id: id };
}
