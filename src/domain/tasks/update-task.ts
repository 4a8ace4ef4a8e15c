import { z } from 'zod';
import { insertMemory } from '../../db/queries/memories/insert-memory.js';
import { notifyChange } from '../../db/change-events.js';
import { announce } from '../announce.js';
import { updateTaskStatus } from '../../db/queries/tasks.js';
import { TASK_STATUSES, type TaskStatus } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import type { Context } from '../context.js';
import { newId } from '../ids.js';
import { contentHash } from '../memory/classify.js';
import { TaskSchema } from './model.js';
import { toTask } from './serialize.js';
import { visibleProjects } from '../visibility.js';

export interface UpdateTaskInput {
  task_id: string;
  status: TaskStatus;
  notes?: string | undefined;
}

/** What `devstream_update_task` returns: its MCP outputSchema and its REST body. */
export const UpdateTaskResultSchema = z.object({
  success: z.boolean(),
  task: TaskSchema,
  previous_status: z.enum(TASK_STATUSES),
  memory_id: z.string().nullable().describe('The memory the notes were stored as (null: not stored as a memory)'),
});
export type UpdateTaskResult = z.output<typeof UpdateTaskResultSchema>;

/**
 * Moves a task to a new status. `started_at` is set the first time it becomes active,
 * `completed_at` the first time it is completed, failed or skipped. Notes are kept in the task's
 * status history and stored, in the same transaction, as a `decision` memory of the task's project
 * (DevStream's format), which the embedding worker then embeds: update_task never waits on the embedder.
 */
export async function updateTask(ctx: Context, input: UpdateTaskInput): Promise<UpdateTaskResult> {
  const id = input.task_id.toLowerCase();
  const notes = input.notes?.trim() ? input.notes : undefined;
  // A task of a project the caller may not see is NOT_FOUND, as if absent.
  const change = {
    id,
    status: input.status,
    notes: notes ?? null,
    createdBy: ctx.caller.name,
    projects: visibleProjects(ctx.caller),
  };
  if (notes === undefined) {
    const row = await updateTaskStatus(ctx.db, change);
    if (!row) throw notFound(`task_id: no task with id "${id}"`, { task_id: id });
    const { previous_status, ...task } = row;
    await announce(ctx, { type: 'task-changed', project: row.project, id: row.id });
    return { success: true, task: toTask(task), previous_status, memory_id: null };
  }

  const enqueue = ctx.memory.embedder.enabled;
  const result = await ctx.db.transaction().execute(async (trx) => {
    const row = await updateTaskStatus(trx, change);
    if (!row) throw notFound(`task_id: no task with id "${id}"`, { task_id: id });
    const content = `Task status update: ${input.status}. Notes: ${notes}`;
    const stored = await insertMemory(trx, {
      id: newId(),
      project: row.project,
      task_id: row.id,
      content,
      content_type: 'decision',
      content_format: 'text',
      keywords: ['task', 'update', input.status],
      importance_score: 0.7,
      content_hash: contentHash(content),
      source: 'task_update',
      embedding: null,
      enqueue,
      created_by: ctx.caller.name,
    });
    if (stored.kind === 'no-project') throw new Error(`project "${row.project}" of task ${row.id} vanished`);
    // Announced at commit, to every instance.
    await notifyChange(trx, { type: 'task-changed', project: row.project, id: row.id });
    if (stored.kind === 'inserted')
      await notifyChange(trx, { type: 'memory-changed', project: row.project, id: stored.memory.id });
    return { row, memoryId: stored.memory.id, queued: stored.kind === 'inserted' && enqueue };
  });
  if (result.queued) ctx.memory.queued('embedding');
  const { previous_status, ...task } = result.row;
  return { success: true, task: toTask(task), previous_status, memory_id: result.memoryId };
}
